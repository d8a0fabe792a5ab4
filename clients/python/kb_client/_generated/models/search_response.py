from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.search_response_mode import SearchResponseMode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_result import SearchResult


T = TypeVar("T", bound="SearchResponse")


@_attrs_define
class SearchResponse:
    """Results, best first.

    Attributes:
        query (str):
        mode (SearchResponseMode):
        as_of (None | str):
        results (list[SearchResult]):
        took_ms (float):
        warnings (list[str] | Unset):
    """

    query: str
    mode: SearchResponseMode
    as_of: None | str
    results: list[SearchResult]
    took_ms: float
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        mode = self.mode.value

        as_of: None | str
        as_of = self.as_of

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        took_ms = self.took_ms

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "query": query,
                "mode": mode,
                "as_of": as_of,
                "results": results,
                "took_ms": took_ms,
            }
        )
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_result import SearchResult

        d = dict(src_dict)
        query = d.pop("query")

        mode = SearchResponseMode(d.pop("mode"))

        def _parse_as_of(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        as_of = _parse_as_of(d.pop("as_of"))

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = SearchResult.from_dict(results_item_data)

            results.append(results_item)

        took_ms = d.pop("took_ms")

        warnings = cast(list[str], d.pop("warnings", UNSET))

        search_response = cls(
            query=query,
            mode=mode,
            as_of=as_of,
            results=results,
            took_ms=took_ms,
            warnings=warnings,
        )

        search_response.additional_properties = d
        return search_response

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
