from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.chunk import Chunk


T = TypeVar("T", bound="ChunkWindow")


@_attrs_define
class ChunkWindow:
    """A chunk with its neighbours.

    Attributes:
        document_id (str):
        version (int):
        chunk_id (str):
        window (int):
        chunks (list[Chunk]):
    """

    document_id: str
    version: int
    chunk_id: str
    window: int
    chunks: list[Chunk]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        version = self.version

        chunk_id = self.chunk_id

        window = self.window

        chunks = []
        for chunks_item_data in self.chunks:
            chunks_item = chunks_item_data.to_dict()
            chunks.append(chunks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "version": version,
                "chunk_id": chunk_id,
                "window": window,
                "chunks": chunks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.chunk import Chunk

        d = dict(src_dict)
        document_id = d.pop("document_id")

        version = d.pop("version")

        chunk_id = d.pop("chunk_id")

        window = d.pop("window")

        chunks = []
        _chunks = d.pop("chunks")
        for chunks_item_data in _chunks:
            chunks_item = Chunk.from_dict(chunks_item_data)

            chunks.append(chunks_item)

        chunk_window = cls(
            document_id=document_id,
            version=version,
            chunk_id=chunk_id,
            window=window,
            chunks=chunks,
        )

        chunk_window.additional_properties = d
        return chunk_window

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
