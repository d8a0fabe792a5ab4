from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SourceRunErrorsItem")


@_attrs_define
class SourceRunErrorsItem:
    """
    Attributes:
        item (None | str):
        code (str):
        detail (str):
    """

    item: None | str
    code: str
    detail: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item: None | str
        item = self.item

        code = self.code

        detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "code": code,
                "detail": detail,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_item(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        item = _parse_item(d.pop("item"))

        code = d.pop("code")

        detail = d.pop("detail")

        source_run_errors_item = cls(
            item=item,
            code=code,
            detail=detail,
        )

        source_run_errors_item.additional_properties = d
        return source_run_errors_item

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
