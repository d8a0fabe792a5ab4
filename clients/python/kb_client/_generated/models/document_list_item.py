from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_status import VersionStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.document_stats import DocumentStats
    from ..models.metadata import Metadata


T = TypeVar("T", bound="DocumentListItem")


@_attrs_define
class DocumentListItem:
    """A document as lists show it.

    Attributes:
        id (UUID): Document id; the same value as `document_id`.
        document_id (UUID):
        name (str): File name of the latest version.
        mime_type (str): Detected type of the latest version.
        source (str): Where the document comes from: `upload` unless the upload named one, or the name of the source of
            synchronisation that keeps it.
        status (VersionStatus):
        version (int):
        metadata (Metadata): Free-form key-value pairs (JSON object).
        stats (DocumentStats):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        source_item (None | str | Unset):
    """

    id: UUID
    document_id: UUID
    name: str
    mime_type: str
    source: str
    status: VersionStatus
    version: int
    metadata: Metadata
    stats: DocumentStats
    created_at: datetime.datetime
    updated_at: datetime.datetime
    source_item: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        document_id = str(self.document_id)

        name = self.name

        mime_type = self.mime_type

        source = self.source

        status = self.status.value

        version = self.version

        metadata = self.metadata.to_dict()

        stats = self.stats.to_dict()

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        source_item: None | str | Unset
        if isinstance(self.source_item, Unset):
            source_item = UNSET
        else:
            source_item = self.source_item

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "document_id": document_id,
                "name": name,
                "mime_type": mime_type,
                "source": source,
                "status": status,
                "version": version,
                "metadata": metadata,
                "stats": stats,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if source_item is not UNSET:
            field_dict["source_item"] = source_item

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.document_stats import DocumentStats
        from ..models.metadata import Metadata

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        document_id = UUID(d.pop("document_id"))

        name = d.pop("name")

        mime_type = d.pop("mime_type")

        source = d.pop("source")

        status = VersionStatus(d.pop("status"))

        version = d.pop("version")

        metadata = Metadata.from_dict(d.pop("metadata"))

        stats = DocumentStats.from_dict(d.pop("stats"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_source_item(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_item = _parse_source_item(d.pop("source_item", UNSET))

        document_list_item = cls(
            id=id,
            document_id=document_id,
            name=name,
            mime_type=mime_type,
            source=source,
            status=status,
            version=version,
            metadata=metadata,
            stats=stats,
            created_at=created_at,
            updated_at=updated_at,
            source_item=source_item,
        )

        document_list_item.additional_properties = d
        return document_list_item

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
