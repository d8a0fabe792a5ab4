from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DocumentText")


@_attrs_define
class DocumentText:
    """The whole extracted text of the version.

    Attributes:
        document_id (str):
        version (int):
        content (str):
        tokens (int):
        chunk_count (int):
    """

    document_id: str
    version: int
    content: str
    tokens: int
    chunk_count: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = self.document_id

        version = self.version

        content = self.content

        tokens = self.tokens

        chunk_count = self.chunk_count

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "version": version,
                "content": content,
                "tokens": tokens,
                "chunk_count": chunk_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        document_id = d.pop("document_id")

        version = d.pop("version")

        content = d.pop("content")

        tokens = d.pop("tokens")

        chunk_count = d.pop("chunk_count")

        document_text = cls(
            document_id=document_id,
            version=version,
            content=content,
            tokens=tokens,
            chunk_count=chunk_count,
        )

        document_text.additional_properties = d
        return document_text

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
