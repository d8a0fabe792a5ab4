from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.added_chunk import AddedChunk
    from ..models.modified_chunk import ModifiedChunk
    from ..models.removed_chunk import RemovedChunk


T = TypeVar("T", bound="VersionChanges")


@_attrs_define
class VersionChanges:
    """
    Attributes:
        added_chunks (int):
        removed_chunks (int):
        modified_chunks (int):
        unchanged_chunks (int):
        diff (list[AddedChunk | ModifiedChunk | RemovedChunk]):
    """

    added_chunks: int
    removed_chunks: int
    modified_chunks: int
    unchanged_chunks: int
    diff: list[AddedChunk | ModifiedChunk | RemovedChunk]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.added_chunk import AddedChunk
        from ..models.removed_chunk import RemovedChunk

        added_chunks = self.added_chunks

        removed_chunks = self.removed_chunks

        modified_chunks = self.modified_chunks

        unchanged_chunks = self.unchanged_chunks

        diff = []
        for diff_item_data in self.diff:
            diff_item: dict[str, Any]
            if isinstance(diff_item_data, AddedChunk) or isinstance(
                diff_item_data, RemovedChunk
            ):
                diff_item = diff_item_data.to_dict()
            else:
                diff_item = diff_item_data.to_dict()

            diff.append(diff_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "added_chunks": added_chunks,
                "removed_chunks": removed_chunks,
                "modified_chunks": modified_chunks,
                "unchanged_chunks": unchanged_chunks,
                "diff": diff,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.added_chunk import AddedChunk
        from ..models.modified_chunk import ModifiedChunk
        from ..models.removed_chunk import RemovedChunk

        d = dict(src_dict)
        added_chunks = d.pop("added_chunks")

        removed_chunks = d.pop("removed_chunks")

        modified_chunks = d.pop("modified_chunks")

        unchanged_chunks = d.pop("unchanged_chunks")

        diff = []
        _diff = d.pop("diff")
        for diff_item_data in _diff:

            def _parse_diff_item(
                data: object,
            ) -> AddedChunk | ModifiedChunk | RemovedChunk:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_diff_entry_type_0 = AddedChunk.from_dict(data)

                    return componentsschemas_diff_entry_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_diff_entry_type_1 = RemovedChunk.from_dict(data)

                    return componentsschemas_diff_entry_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_diff_entry_type_2 = ModifiedChunk.from_dict(data)

                return componentsschemas_diff_entry_type_2

            diff_item = _parse_diff_item(diff_item_data)

            diff.append(diff_item)

        version_changes = cls(
            added_chunks=added_chunks,
            removed_chunks=removed_chunks,
            modified_chunks=modified_chunks,
            unchanged_chunks=unchanged_chunks,
            diff=diff,
        )

        version_changes.additional_properties = d
        return version_changes

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
