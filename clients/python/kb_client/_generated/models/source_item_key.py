from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SourceItemKey")


@_attrs_define
class SourceItemKey:
    """
    Attributes:
        source (str): The `source` the document was uploaded with.
        source_item (str): The `source_item` it was uploaded with (exact: case and spaces count).
    """

    source: str
    source_item: str

    def to_dict(self) -> dict[str, Any]:
        source = self.source

        source_item = self.source_item

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "source": source,
                "source_item": source_item,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        source = d.pop("source")

        source_item = d.pop("source_item")

        source_item_key = cls(
            source=source,
            source_item=source_item,
        )

        return source_item_key
