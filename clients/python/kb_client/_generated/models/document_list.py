from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.document_list_item import DocumentListItem
    from ..models.pagination import Pagination


T = TypeVar("T", bound="DocumentList")


@_attrs_define
class DocumentList:
    """Cursor paging: a page of documents and where the next one starts.

    Attributes:
        documents (list[DocumentListItem]):
        pagination (Pagination):
    """

    documents: list[DocumentListItem]
    pagination: Pagination
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        documents = []
        for documents_item_data in self.documents:
            documents_item = documents_item_data.to_dict()
            documents.append(documents_item)

        pagination = self.pagination.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "documents": documents,
                "pagination": pagination,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.document_list_item import DocumentListItem
        from ..models.pagination import Pagination

        d = dict(src_dict)
        documents = []
        _documents = d.pop("documents")
        for documents_item_data in _documents:
            documents_item = DocumentListItem.from_dict(documents_item_data)

            documents.append(documents_item)

        pagination = Pagination.from_dict(d.pop("pagination"))

        document_list = cls(
            documents=documents,
            pagination=pagination,
        )

        document_list.additional_properties = d
        return document_list

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
