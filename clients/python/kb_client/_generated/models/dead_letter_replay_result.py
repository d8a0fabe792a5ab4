from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.dead_letter import DeadLetter


T = TypeVar("T", bound="DeadLetterReplayResult")


@_attrs_define
class DeadLetterReplayResult:
    """
    Attributes:
        replayed (int): Dead letters whose event went back to its stage.
        skipped (int): Dead letters with nothing left to re-drive, recorded as replayed.
        dead_letters (list[DeadLetter]): Each dead letter this replay handled.
    """

    replayed: int
    skipped: int
    dead_letters: list[DeadLetter]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        replayed = self.replayed

        skipped = self.skipped

        dead_letters = []
        for dead_letters_item_data in self.dead_letters:
            dead_letters_item = dead_letters_item_data.to_dict()
            dead_letters.append(dead_letters_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "replayed": replayed,
                "skipped": skipped,
                "dead_letters": dead_letters,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.dead_letter import DeadLetter

        d = dict(src_dict)
        replayed = d.pop("replayed")

        skipped = d.pop("skipped")

        dead_letters = []
        _dead_letters = d.pop("dead_letters")
        for dead_letters_item_data in _dead_letters:
            dead_letters_item = DeadLetter.from_dict(dead_letters_item_data)

            dead_letters.append(dead_letters_item)

        dead_letter_replay_result = cls(
            replayed=replayed,
            skipped=skipped,
            dead_letters=dead_letters,
        )

        dead_letter_replay_result.additional_properties = d
        return dead_letter_replay_result

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
