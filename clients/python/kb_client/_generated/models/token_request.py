from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.token_request_permissions_item import TokenRequestPermissionsItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_filters import SearchFilters


T = TypeVar("T", bound="TokenRequest")


@_attrs_define
class TokenRequest:
    """
    Attributes:
        expires_in (int): Lifetime in seconds (required), at most the operator's bound `KB_TOKEN_MAX_TTL_S` (default
            86400).
        permissions (list[TokenRequestPermissionsItem] | Unset): What the token may do: `read`, `search`, or both
            (default: those of the key's). Never `write`.
        filters (SearchFilters | Unset):
        sources (list[str] | Unset): Names of the sources a visible document must come from (its `source`); absent: any
            source.
    """

    expires_in: int
    permissions: list[TokenRequestPermissionsItem] | Unset = UNSET
    filters: SearchFilters | Unset = UNSET
    sources: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        expires_in = self.expires_in

        permissions: list[str] | Unset = UNSET
        if not isinstance(self.permissions, Unset):
            permissions = []
            for permissions_item_data in self.permissions:
                permissions_item = permissions_item_data.value
                permissions.append(permissions_item)

        filters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filters, Unset):
            filters = self.filters.to_dict()

        sources: list[str] | Unset = UNSET
        if not isinstance(self.sources, Unset):
            sources = self.sources

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "expires_in": expires_in,
            }
        )
        if permissions is not UNSET:
            field_dict["permissions"] = permissions
        if filters is not UNSET:
            field_dict["filters"] = filters
        if sources is not UNSET:
            field_dict["sources"] = sources

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_filters import SearchFilters

        d = dict(src_dict)
        expires_in = d.pop("expires_in")

        _permissions = d.pop("permissions", UNSET)
        permissions: list[TokenRequestPermissionsItem] | Unset = UNSET
        if _permissions is not UNSET:
            permissions = []
            for permissions_item_data in _permissions:
                permissions_item = TokenRequestPermissionsItem(permissions_item_data)

                permissions.append(permissions_item)

        _filters = d.pop("filters", UNSET)
        filters: SearchFilters | Unset
        if isinstance(_filters, Unset):
            filters = UNSET
        else:
            filters = SearchFilters.from_dict(_filters)

        sources = cast(list[str], d.pop("sources", UNSET))

        token_request = cls(
            expires_in=expires_in,
            permissions=permissions,
            filters=filters,
            sources=sources,
        )

        return token_request
