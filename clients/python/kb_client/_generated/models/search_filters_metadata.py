from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SearchFiltersMetadata")


@_attrs_define
class SearchFiltersMetadata:
    """Metadata `key` equals the value, or one of the values; at most 64 keys (all must match)."""

    additional_properties: dict[str, bool | float | list[bool | float | str] | str] = (
        _attrs_field(init=False, factory=dict)
    )

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            if isinstance(prop, list):
                field_dict[prop_name] = []
                for additional_property_type_1_item_data in prop:
                    additional_property_type_1_item: bool | float | str
                    additional_property_type_1_item = (
                        additional_property_type_1_item_data
                    )
                    field_dict[prop_name].append(additional_property_type_1_item)

            else:
                field_dict[prop_name] = prop

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        search_filters_metadata = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():

            def _parse_additional_property(
                data: object,
            ) -> bool | float | list[bool | float | str] | str:
                try:
                    if not isinstance(data, list):
                        raise TypeError()
                    additional_property_type_1 = []
                    _additional_property_type_1 = data
                    for (
                        additional_property_type_1_item_data
                    ) in _additional_property_type_1:

                        def _parse_additional_property_type_1_item(
                            data: object,
                        ) -> bool | float | str:
                            return cast(bool | float | str, data)

                        additional_property_type_1_item = (
                            _parse_additional_property_type_1_item(
                                additional_property_type_1_item_data
                            )
                        )

                        additional_property_type_1.append(
                            additional_property_type_1_item
                        )

                    return additional_property_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                return cast(bool | float | list[bool | float | str] | str, data)

            additional_property = _parse_additional_property(prop_dict)

            additional_properties[prop_name] = additional_property

        search_filters_metadata.additional_properties = additional_properties
        return search_filters_metadata

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> bool | float | list[bool | float | str] | str:
        return self.additional_properties[key]

    def __setitem__(
        self, key: str, value: bool | float | list[bool | float | str] | str
    ) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
