from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.removed_chunk_type import RemovedChunkType

T = TypeVar("T", bound="RemovedChunk")


@_attrs_define
class RemovedChunk:
    """
    Attributes:
        type_ (RemovedChunkType):
        from_index (int):
        to_index (None):
        content (str):
    """

    type_: RemovedChunkType
    from_index: int
    to_index: None
    content: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        from_index = self.from_index

        to_index = self.to_index

        content = self.content

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "from_index": from_index,
                "to_index": to_index,
                "content": content,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = RemovedChunkType(d.pop("type"))

        from_index = d.pop("from_index")

        to_index = d.pop("to_index")

        content = d.pop("content")

        removed_chunk = cls(
            type_=type_,
            from_index=from_index,
            to_index=to_index,
            content=content,
        )

        removed_chunk.additional_properties = d
        return removed_chunk

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
