from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.version_changes import VersionChanges


T = TypeVar("T", bound="VersionComparison")


@_attrs_define
class VersionComparison:
    """Chunk-level differences.

    Attributes:
        document_id (str):
        from_version (int):
        to_version (int):
        changes (VersionChanges):
    """

    document_id: str
    from_version: int
    to_version: int
    changes: VersionChanges
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        from_version = self.from_version

        to_version = self.to_version

        changes = self.changes.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "from_version": from_version,
                "to_version": to_version,
                "changes": changes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.version_changes import VersionChanges

        d = dict(src_dict)
        document_id = d.pop("document_id")

        from_version = d.pop("from_version")

        to_version = d.pop("to_version")

        changes = VersionChanges.from_dict(d.pop("changes"))

        version_comparison = cls(
            document_id=document_id,
            from_version=from_version,
            to_version=to_version,
            changes=changes,
        )

        version_comparison.additional_properties = d
        return version_comparison

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
