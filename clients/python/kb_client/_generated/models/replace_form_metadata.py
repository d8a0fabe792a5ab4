from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplaceFormMetadata")


@_attrs_define
class ReplaceFormMetadata:
    """A JSON object replacing the metadata (same limits as on upload); omitted keeps it.

    Attributes:
        change_reason (None | str | Unset):
    """

    change_reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        change_reason: None | str | Unset
        if isinstance(self.change_reason, Unset):
            change_reason = UNSET
        else:
            change_reason = self.change_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if change_reason is not UNSET:
            field_dict["change_reason"] = change_reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_change_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        change_reason = _parse_change_reason(d.pop("change_reason", UNSET))

        replace_form_metadata = cls(
            change_reason=change_reason,
        )

        replace_form_metadata.additional_properties = d
        return replace_form_metadata

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
