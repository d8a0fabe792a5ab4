from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.scoped_token_permissions_item import ScopedTokenPermissionsItem
from ..models.scoped_token_token_type import ScopedTokenTokenType

if TYPE_CHECKING:
    from ..models.search_filters import SearchFilters


T = TypeVar("T", bound="ScopedToken")


@_attrs_define
class ScopedToken:
    """
    Attributes:
        token (str): Send it as `Authorization: Bearer <token>` (or `X-API-Key`).
        token_type (ScopedTokenTokenType):
        expires_at (datetime.datetime):
        workspace_id (str):
        parent_key_id (str): The key that minted the token: revoking it ends the token.
        permissions (list[ScopedTokenPermissionsItem]):
        filters (SearchFilters):
        sources (list[str] | None):
    """

    token: str
    token_type: ScopedTokenTokenType
    expires_at: datetime.datetime
    workspace_id: str
    parent_key_id: str
    permissions: list[ScopedTokenPermissionsItem]
    filters: SearchFilters
    sources: list[str] | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        token = self.token

        token_type = self.token_type.value

        expires_at = self.expires_at.isoformat()

        workspace_id = self.workspace_id

        parent_key_id = self.parent_key_id

        permissions = []
        for permissions_item_data in self.permissions:
            permissions_item = permissions_item_data.value
            permissions.append(permissions_item)

        filters = self.filters.to_dict()

        sources: list[str] | None
        if isinstance(self.sources, list):
            sources = self.sources

        else:
            sources = self.sources

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "token": token,
                "token_type": token_type,
                "expires_at": expires_at,
                "workspace_id": workspace_id,
                "parent_key_id": parent_key_id,
                "permissions": permissions,
                "filters": filters,
                "sources": sources,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_filters import SearchFilters

        d = dict(src_dict)
        token = d.pop("token")

        token_type = ScopedTokenTokenType(d.pop("token_type"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        workspace_id = d.pop("workspace_id")

        parent_key_id = d.pop("parent_key_id")

        permissions = []
        _permissions = d.pop("permissions")
        for permissions_item_data in _permissions:
            permissions_item = ScopedTokenPermissionsItem(permissions_item_data)

            permissions.append(permissions_item)

        filters = SearchFilters.from_dict(d.pop("filters"))

        def _parse_sources(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sources_type_0 = cast(list[str], data)

                return sources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        sources = _parse_sources(d.pop("sources"))

        scoped_token = cls(
            token=token,
            token_type=token_type,
            expires_at=expires_at,
            workspace_id=workspace_id,
            parent_key_id=parent_key_id,
            permissions=permissions,
            filters=filters,
            sources=sources,
        )

        scoped_token.additional_properties = d
        return scoped_token

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
