from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_status import VersionStatus

T = TypeVar("T", bound="DocumentLookupMatch")


@_attrs_define
class DocumentLookupMatch:
    """A document found by the (source, source_item) it was uploaded with.

    Attributes:
        source (str):
        source_item (str):
        document_id (UUID):
        name (str): File name of the latest version.
        version (int): The latest version.
        status (VersionStatus):
        content_hash (str): SHA-256 of the latest version’s file, hex.
        size_bytes (int):
        updated_at (datetime.datetime):
    """

    source: str
    source_item: str
    document_id: UUID
    name: str
    version: int
    status: VersionStatus
    content_hash: str
    size_bytes: int
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source = self.source

        source_item = self.source_item

        document_id = str(self.document_id)

        name = self.name

        version = self.version

        status = self.status.value

        content_hash = self.content_hash

        size_bytes = self.size_bytes

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "source": source,
                "source_item": source_item,
                "document_id": document_id,
                "name": name,
                "version": version,
                "status": status,
                "content_hash": content_hash,
                "size_bytes": size_bytes,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        source = d.pop("source")

        source_item = d.pop("source_item")

        document_id = UUID(d.pop("document_id"))

        name = d.pop("name")

        version = d.pop("version")

        status = VersionStatus(d.pop("status"))

        content_hash = d.pop("content_hash")

        size_bytes = d.pop("size_bytes")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        document_lookup_match = cls(
            source=source,
            source_item=source_item,
            document_id=document_id,
            name=name,
            version=version,
            status=status,
            content_hash=content_hash,
            size_bytes=size_bytes,
            updated_at=updated_at,
        )

        document_lookup_match.additional_properties = d
        return document_lookup_match

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
