from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.modified_chunk_type import ModifiedChunkType

T = TypeVar("T", bound="ModifiedChunk")


@_attrs_define
class ModifiedChunk:
    """
    Attributes:
        type_ (ModifiedChunkType):
        from_index (int):
        to_index (int):
        old_content (str):
        new_content (str):
    """

    type_: ModifiedChunkType
    from_index: int
    to_index: int
    old_content: str
    new_content: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        from_index = self.from_index

        to_index = self.to_index

        old_content = self.old_content

        new_content = self.new_content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "from_index": from_index,
                "to_index": to_index,
                "old_content": old_content,
                "new_content": new_content,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = ModifiedChunkType(d.pop("type"))

        from_index = d.pop("from_index")

        to_index = d.pop("to_index")

        old_content = d.pop("old_content")

        new_content = d.pop("new_content")

        modified_chunk = cls(
            type_=type_,
            from_index=from_index,
            to_index=to_index,
            old_content=old_content,
            new_content=new_content,
        )

        modified_chunk.additional_properties = d
        return modified_chunk

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
