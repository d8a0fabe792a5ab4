from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.version import Version


T = TypeVar("T", bound="VersionList")


@_attrs_define
class VersionList:
    """Versions, newest first.

    Attributes:
        document_id (str):
        versions (list[Version]):
    """

    document_id: str
    versions: list[Version]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "versions": versions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.version import Version

        d = dict(src_dict)
        document_id = d.pop("document_id")

        versions = []
        _versions = d.pop("versions")
        for versions_item_data in _versions:
            versions_item = Version.from_dict(versions_item_data)

            versions.append(versions_item)

        version_list = cls(
            document_id=document_id,
            versions=versions,
        )

        version_list.additional_properties = d
        return version_list

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
