from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dead_letter_count_stage import DeadLetterCountStage

T = TypeVar("T", bound="DeadLetterCount")


@_attrs_define
class DeadLetterCount:
    """
    Attributes:
        stage (DeadLetterCountStage):
        total (int): Dead letters retained.
        pending (int): Of those, not replayed yet.
    """

    stage: DeadLetterCountStage
    total: int
    pending: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        stage = self.stage.value

        total = self.total

        pending = self.pending

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "stage": stage,
                "total": total,
                "pending": pending,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        stage = DeadLetterCountStage(d.pop("stage"))

        total = d.pop("total")

        pending = d.pop("pending")

        dead_letter_count = cls(
            stage=stage,
            total=total,
            pending=pending,
        )

        dead_letter_count.additional_properties = d
        return dead_letter_count

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
