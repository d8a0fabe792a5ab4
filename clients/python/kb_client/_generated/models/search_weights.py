from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SearchWeights")


@_attrs_define
class SearchWeights:
    """Hybrid only: how much each ranking counts (scaled to sum 1; not both 0). Default: the service's
    `KB_HYBRID_SEMANTIC_WEIGHT`.

        Attributes:
            keyword (float): Weight of the keyword (BM25) ranking.
            semantic (float): Weight of the semantic ranking.
    """

    keyword: float
    semantic: float

    def to_dict(self) -> dict[str, Any]:
        keyword = self.keyword

        semantic = self.semantic

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "keyword": keyword,
                "semantic": semantic,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        keyword = d.pop("keyword")

        semantic = d.pop("semantic")

        search_weights = cls(
            keyword=keyword,
            semantic=semantic,
        )

        return search_weights
