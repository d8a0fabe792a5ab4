from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_status import VersionStatus

T = TypeVar("T", bound="RollbackResult")


@_attrs_define
class RollbackResult:
    """The new version (with version N's content, chunks and vectors).

    Attributes:
        document_id (str):
        version (int):
        restored_from (int):
        status (VersionStatus):
    """

    document_id: str
    version: int
    restored_from: int
    status: VersionStatus
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        version = self.version

        restored_from = self.restored_from

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "version": version,
                "restored_from": restored_from,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        document_id = d.pop("document_id")

        version = d.pop("version")

        restored_from = d.pop("restored_from")

        status = VersionStatus(d.pop("status"))

        rollback_result = cls(
            document_id=document_id,
            version=version,
            restored_from=restored_from,
            status=status,
        )

        rollback_result.additional_properties = d
        return rollback_result

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
