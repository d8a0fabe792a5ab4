from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.source_item_key import SourceItemKey


T = TypeVar("T", bound="DocumentLookup")


@_attrs_define
class DocumentLookup:
    """
    Attributes:
        items (list[SourceItemKey]): The (source, source_item) pairs to look up, 1 to 1000.
    """

    items: list[SourceItemKey]

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "items": items,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_item_key import SourceItemKey

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = SourceItemKey.from_dict(items_item_data)

            items.append(items_item)

        document_lookup = cls(
            items=items,
        )

        return document_lookup
