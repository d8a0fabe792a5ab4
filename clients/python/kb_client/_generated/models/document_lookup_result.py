from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.document_lookup_match import DocumentLookupMatch


T = TypeVar("T", bound="DocumentLookupResult")


@_attrs_define
class DocumentLookupResult:
    """
    Attributes:
        documents (list[DocumentLookupMatch]): The documents (not deleted) uploaded with one of the pairs, ordered by
            source, item, then creation; a pair that matches nothing is absent, one uploaded twice without an Idempotency-
            Key answers both documents.
    """

    documents: list[DocumentLookupMatch]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        documents = []
        for documents_item_data in self.documents:
            documents_item = documents_item_data.to_dict()
            documents.append(documents_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "documents": documents,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.document_lookup_match import DocumentLookupMatch

        d = dict(src_dict)
        documents = []
        _documents = d.pop("documents")
        for documents_item_data in _documents:
            documents_item = DocumentLookupMatch.from_dict(documents_item_data)

            documents.append(documents_item)

        document_lookup_result = cls(
            documents=documents,
        )

        document_lookup_result.additional_properties = d
        return document_lookup_result

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
