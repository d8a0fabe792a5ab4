from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.search_request_group_by import SearchRequestGroupBy
from ..models.search_request_mode import SearchRequestMode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_filters import SearchFilters
    from ..models.search_weights import SearchWeights


T = TypeVar("T", bound="SearchRequest")


@_attrs_define
class SearchRequest:
    """
    Attributes:
        query (str): Search text (1–2000 characters).
        as_of (datetime.datetime | None | Unset):
        limit (int | Unset):  Default: 10.
        mode (SearchRequestMode | Unset): `hybrid` (BM25 and vector similarity, each min-max normalised over its
            candidates, combined by `weights`), `semantic` or `keyword`. Keyword and hybrid put chunks that hold the query
            as a phrase (3 words or more) first. Default: SearchRequestMode.HYBRID.
        weights (SearchWeights | Unset): Hybrid only: how much each ranking counts (scaled to sum 1; not both 0).
            Default: the service's `KB_HYBRID_SEMANTIC_WEIGHT`.
        group_by (SearchRequestGroupBy | Unset): `passage`: drop a chunk whose text overlaps a better one of the same
            version; `document`: one result per document (its best chunk); `none`: every chunk. Default:
            SearchRequestGroupBy.PASSAGE.
        filters (SearchFilters | Unset):
        min_score (float | Unset): Drop results scoring below this.
    """

    query: str
    as_of: datetime.datetime | None | Unset = UNSET
    limit: int | Unset = 10
    mode: SearchRequestMode | Unset = SearchRequestMode.HYBRID
    weights: SearchWeights | Unset = UNSET
    group_by: SearchRequestGroupBy | Unset = SearchRequestGroupBy.PASSAGE
    filters: SearchFilters | Unset = UNSET
    min_score: float | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        as_of: None | str | Unset
        if isinstance(self.as_of, Unset):
            as_of = UNSET
        elif isinstance(self.as_of, datetime.datetime):
            as_of = self.as_of.isoformat()
        else:
            as_of = self.as_of

        limit = self.limit

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        weights: dict[str, Any] | Unset = UNSET
        if not isinstance(self.weights, Unset):
            weights = self.weights.to_dict()

        group_by: str | Unset = UNSET
        if not isinstance(self.group_by, Unset):
            group_by = self.group_by.value

        filters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filters, Unset):
            filters = self.filters.to_dict()

        min_score = self.min_score

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "query": query,
            }
        )
        if as_of is not UNSET:
            field_dict["as_of"] = as_of
        if limit is not UNSET:
            field_dict["limit"] = limit
        if mode is not UNSET:
            field_dict["mode"] = mode
        if weights is not UNSET:
            field_dict["weights"] = weights
        if group_by is not UNSET:
            field_dict["group_by"] = group_by
        if filters is not UNSET:
            field_dict["filters"] = filters
        if min_score is not UNSET:
            field_dict["min_score"] = min_score

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_filters import SearchFilters
        from ..models.search_weights import SearchWeights

        d = dict(src_dict)
        query = d.pop("query")

        def _parse_as_of(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                as_of_type_0 = datetime.datetime.fromisoformat(data)

                return as_of_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        as_of = _parse_as_of(d.pop("as_of", UNSET))

        limit = d.pop("limit", UNSET)

        _mode = d.pop("mode", UNSET)
        mode: SearchRequestMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = SearchRequestMode(_mode)

        _weights = d.pop("weights", UNSET)
        weights: SearchWeights | Unset
        if isinstance(_weights, Unset):
            weights = UNSET
        else:
            weights = SearchWeights.from_dict(_weights)

        _group_by = d.pop("group_by", UNSET)
        group_by: SearchRequestGroupBy | Unset
        if isinstance(_group_by, Unset):
            group_by = UNSET
        else:
            group_by = SearchRequestGroupBy(_group_by)

        _filters = d.pop("filters", UNSET)
        filters: SearchFilters | Unset
        if isinstance(_filters, Unset):
            filters = UNSET
        else:
            filters = SearchFilters.from_dict(_filters)

        min_score = d.pop("min_score", UNSET)

        search_request = cls(
            query=query,
            as_of=as_of,
            limit=limit,
            mode=mode,
            weights=weights,
            group_by=group_by,
            filters=filters,
            min_score=min_score,
        )

        return search_request
