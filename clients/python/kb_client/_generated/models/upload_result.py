from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.upload_result_status import UploadResultStatus

T = TypeVar("T", bound="UploadResult")


@_attrs_define
class UploadResult:
    """Stored and queued for ingestion.

    Attributes:
        document_id (UUID):
        name (str):
        workspace_id (str):
        storage_url (str):
        mime_type (str):
        size_bytes (int):
        content_hash (str):
        status (UploadResultStatus):
        version (int):
        message (str):
    """

    document_id: UUID
    name: str
    workspace_id: str
    storage_url: str
    mime_type: str
    size_bytes: int
    content_hash: str
    status: UploadResultStatus
    version: int
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = str(self.document_id)

        name = self.name

        workspace_id = self.workspace_id

        storage_url = self.storage_url

        mime_type = self.mime_type

        size_bytes = self.size_bytes

        content_hash = self.content_hash

        status = self.status.value

        version = self.version

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "name": name,
                "workspace_id": workspace_id,
                "storage_url": storage_url,
                "mime_type": mime_type,
                "size_bytes": size_bytes,
                "content_hash": content_hash,
                "status": status,
                "version": version,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        document_id = UUID(d.pop("document_id"))

        name = d.pop("name")

        workspace_id = d.pop("workspace_id")

        storage_url = d.pop("storage_url")

        mime_type = d.pop("mime_type")

        size_bytes = d.pop("size_bytes")

        content_hash = d.pop("content_hash")

        status = UploadResultStatus(d.pop("status"))

        version = d.pop("version")

        message = d.pop("message")

        upload_result = cls(
            document_id=document_id,
            name=name,
            workspace_id=workspace_id,
            storage_url=storage_url,
            mime_type=mime_type,
            size_bytes=size_bytes,
            content_hash=content_hash,
            status=status,
            version=version,
            message=message,
        )

        upload_result.additional_properties = d
        return upload_result

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
