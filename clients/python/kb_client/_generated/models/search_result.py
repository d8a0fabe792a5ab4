from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.metadata import Metadata


T = TypeVar("T", bound="SearchResult")


@_attrs_define
class SearchResult:
    """One passage (chunk), with its document and version.

    Attributes:
        chunk_id (str):
        document_id (str):
        document_name (str):
        version (int):
        index (int):
        score (float):
        content (str):
        highlights (list[str]): Up to three snippets of `content` around the query terms. The text is HTML-escaped (`&`,
            `<`, `>`, `"` and `'` as `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;`) and each matched term is wrapped in
            `<em>…</em>`, the only markup, so a snippet can be inserted as HTML.
        metadata (Metadata): Free-form key-value pairs (JSON object).
        page (int | None):
    """

    chunk_id: str
    document_id: str
    document_name: str
    version: int
    index: int
    score: float
    content: str
    highlights: list[str]
    metadata: Metadata
    page: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        chunk_id = self.chunk_id

        document_id = self.document_id

        document_name = self.document_name

        version = self.version

        index = self.index

        score = self.score

        content = self.content

        highlights = self.highlights

        metadata = self.metadata.to_dict()

        page: int | None
        page = self.page

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "chunk_id": chunk_id,
                "document_id": document_id,
                "document_name": document_name,
                "version": version,
                "index": index,
                "score": score,
                "content": content,
                "highlights": highlights,
                "metadata": metadata,
                "page": page,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.metadata import Metadata

        d = dict(src_dict)
        chunk_id = d.pop("chunk_id")

        document_id = d.pop("document_id")

        document_name = d.pop("document_name")

        version = d.pop("version")

        index = d.pop("index")

        score = d.pop("score")

        content = d.pop("content")

        highlights = cast(list[str], d.pop("highlights"))

        metadata = Metadata.from_dict(d.pop("metadata"))

        def _parse_page(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        page = _parse_page(d.pop("page"))

        search_result = cls(
            chunk_id=chunk_id,
            document_id=document_id,
            document_name=document_name,
            version=version,
            index=index,
            score=score,
            content=content,
            highlights=highlights,
            metadata=metadata,
            page=page,
        )

        search_result.additional_properties = d
        return search_result

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
