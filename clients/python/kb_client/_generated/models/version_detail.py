from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_status import VersionStatus

if TYPE_CHECKING:
    from ..models.ingest_error import IngestError
    from ..models.metadata import Metadata


T = TypeVar("T", bound="VersionDetail")


@_attrs_define
class VersionDetail:
    """One version with its metadata.

    Attributes:
        version (int):
        created_at (datetime.datetime):
        created_by (str): Id of the API key that created the version.
        size_bytes (int):
        chunk_count (int):
        status (VersionStatus):
        change_reason (None | str):
        restored_from (int | None):
        content_hash (str):
        name (str):
        mime_type (str):
        tokens (int):
        served_from (datetime.datetime | None):
        served_until (datetime.datetime | None):
        archived (bool):
        error (IngestError | None):
        metadata (Metadata): Free-form key-value pairs (JSON object).
        storage_url (str):
    """

    version: int
    created_at: datetime.datetime
    created_by: str
    size_bytes: int
    chunk_count: int
    status: VersionStatus
    change_reason: None | str
    restored_from: int | None
    content_hash: str
    name: str
    mime_type: str
    tokens: int
    served_from: datetime.datetime | None
    served_until: datetime.datetime | None
    archived: bool
    error: IngestError | None
    metadata: Metadata
    storage_url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.ingest_error import IngestError

        version = self.version

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        size_bytes = self.size_bytes

        chunk_count = self.chunk_count

        status = self.status.value

        change_reason: None | str
        change_reason = self.change_reason

        restored_from: int | None
        restored_from = self.restored_from

        content_hash = self.content_hash

        name = self.name

        mime_type = self.mime_type

        tokens = self.tokens

        served_from: None | str
        if isinstance(self.served_from, datetime.datetime):
            served_from = self.served_from.isoformat()
        else:
            served_from = self.served_from

        served_until: None | str
        if isinstance(self.served_until, datetime.datetime):
            served_until = self.served_until.isoformat()
        else:
            served_until = self.served_until

        archived = self.archived

        error: dict[str, Any] | None
        if isinstance(self.error, IngestError):
            error = self.error.to_dict()
        else:
            error = self.error

        metadata = self.metadata.to_dict()

        storage_url = self.storage_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "version": version,
                "created_at": created_at,
                "created_by": created_by,
                "size_bytes": size_bytes,
                "chunk_count": chunk_count,
                "status": status,
                "change_reason": change_reason,
                "restored_from": restored_from,
                "content_hash": content_hash,
                "name": name,
                "mime_type": mime_type,
                "tokens": tokens,
                "served_from": served_from,
                "served_until": served_until,
                "archived": archived,
                "error": error,
                "metadata": metadata,
                "storage_url": storage_url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ingest_error import IngestError
        from ..models.metadata import Metadata

        d = dict(src_dict)
        version = d.pop("version")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        size_bytes = d.pop("size_bytes")

        chunk_count = d.pop("chunk_count")

        status = VersionStatus(d.pop("status"))

        def _parse_change_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        change_reason = _parse_change_reason(d.pop("change_reason"))

        def _parse_restored_from(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        restored_from = _parse_restored_from(d.pop("restored_from"))

        content_hash = d.pop("content_hash")

        name = d.pop("name")

        mime_type = d.pop("mime_type")

        tokens = d.pop("tokens")

        def _parse_served_from(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                served_from_type_0 = datetime.datetime.fromisoformat(data)

                return served_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        served_from = _parse_served_from(d.pop("served_from"))

        def _parse_served_until(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                served_until_type_0 = datetime.datetime.fromisoformat(data)

                return served_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        served_until = _parse_served_until(d.pop("served_until"))

        archived = d.pop("archived")

        def _parse_error(data: object) -> IngestError | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = IngestError.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(IngestError | None, data)

        error = _parse_error(d.pop("error"))

        metadata = Metadata.from_dict(d.pop("metadata"))

        storage_url = d.pop("storage_url")

        version_detail = cls(
            version=version,
            created_at=created_at,
            created_by=created_by,
            size_bytes=size_bytes,
            chunk_count=chunk_count,
            status=status,
            change_reason=change_reason,
            restored_from=restored_from,
            content_hash=content_hash,
            name=name,
            mime_type=mime_type,
            tokens=tokens,
            served_from=served_from,
            served_until=served_until,
            archived=archived,
            error=error,
            metadata=metadata,
            storage_url=storage_url,
        )

        version_detail.additional_properties = d
        return version_detail

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
