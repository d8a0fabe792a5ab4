from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.chunk import Chunk
    from ..models.pagination import Pagination


T = TypeVar("T", bound="ChunkList")


@_attrs_define
class ChunkList:
    """Chunks in index order.

    Attributes:
        document_id (str):
        version (int):
        chunks (list[Chunk]):
        pagination (Pagination):
    """

    document_id: str
    version: int
    chunks: list[Chunk]
    pagination: Pagination
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        version = self.version

        chunks = []
        for chunks_item_data in self.chunks:
            chunks_item = chunks_item_data.to_dict()
            chunks.append(chunks_item)

        pagination = self.pagination.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "version": version,
                "chunks": chunks,
                "pagination": pagination,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.chunk import Chunk
        from ..models.pagination import Pagination

        d = dict(src_dict)
        document_id = d.pop("document_id")

        version = d.pop("version")

        chunks = []
        _chunks = d.pop("chunks")
        for chunks_item_data in _chunks:
            chunks_item = Chunk.from_dict(chunks_item_data)

            chunks.append(chunks_item)

        pagination = Pagination.from_dict(d.pop("pagination"))

        chunk_list = cls(
            document_id=document_id,
            version=version,
            chunks=chunks,
            pagination=pagination,
        )

        chunk_list.additional_properties = d
        return chunk_list

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
