from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.metadata import Metadata


T = TypeVar("T", bound="Chunk")


@_attrs_define
class Chunk:
    """One chunk of a version, with its place in the text.

    Attributes:
        id (str): `<document_id>:<version>:<index>`
        index (int):
        content (str):
        tokens (int):
        start_offset (int):
        end_offset (int):
        page (int | None):
        metadata (Metadata): Free-form key-value pairs (JSON object).
    """

    id: str
    index: int
    content: str
    tokens: int
    start_offset: int
    end_offset: int
    page: int | None
    metadata: Metadata
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        index = self.index

        content = self.content

        tokens = self.tokens

        start_offset = self.start_offset

        end_offset = self.end_offset

        page: int | None
        page = self.page

        metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "index": index,
                "content": content,
                "tokens": tokens,
                "start_offset": start_offset,
                "end_offset": end_offset,
                "page": page,
                "metadata": metadata,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.metadata import Metadata

        d = dict(src_dict)
        id = d.pop("id")

        index = d.pop("index")

        content = d.pop("content")

        tokens = d.pop("tokens")

        start_offset = d.pop("start_offset")

        end_offset = d.pop("end_offset")

        def _parse_page(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        page = _parse_page(d.pop("page"))

        metadata = Metadata.from_dict(d.pop("metadata"))

        chunk = cls(
            id=id,
            index=index,
            content=content,
            tokens=tokens,
            start_offset=start_offset,
            end_offset=end_offset,
            page=page,
            metadata=metadata,
        )

        chunk.additional_properties = d
        return chunk

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
