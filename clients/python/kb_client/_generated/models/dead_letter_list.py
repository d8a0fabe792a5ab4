from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.dead_letter import DeadLetter
    from ..models.dead_letter_count import DeadLetterCount


T = TypeVar("T", bound="DeadLetterList")


@_attrs_define
class DeadLetterList:
    """
    Attributes:
        dead_letters (list[DeadLetter]): Oldest first.
        counts (list[DeadLetterCount]): Per stage, whatever `state` is.
    """

    dead_letters: list[DeadLetter]
    counts: list[DeadLetterCount]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dead_letters = []
        for dead_letters_item_data in self.dead_letters:
            dead_letters_item = dead_letters_item_data.to_dict()
            dead_letters.append(dead_letters_item)

        counts = []
        for counts_item_data in self.counts:
            counts_item = counts_item_data.to_dict()
            counts.append(counts_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dead_letters": dead_letters,
                "counts": counts,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.dead_letter import DeadLetter
        from ..models.dead_letter_count import DeadLetterCount

        d = dict(src_dict)
        dead_letters = []
        _dead_letters = d.pop("dead_letters")
        for dead_letters_item_data in _dead_letters:
            dead_letters_item = DeadLetter.from_dict(dead_letters_item_data)

            dead_letters.append(dead_letters_item)

        counts = []
        _counts = d.pop("counts")
        for counts_item_data in _counts:
            counts_item = DeadLetterCount.from_dict(counts_item_data)

            counts.append(counts_item)

        dead_letter_list = cls(
            dead_letters=dead_letters,
            counts=counts,
        )

        dead_letter_list.additional_properties = d
        return dead_letter_list

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
