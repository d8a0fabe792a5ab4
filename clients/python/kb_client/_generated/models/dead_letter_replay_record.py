from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dead_letter_replay_record_outcome import DeadLetterReplayRecordOutcome

T = TypeVar("T", bound="DeadLetterReplayRecord")


@_attrs_define
class DeadLetterReplayRecord:
    """
    Attributes:
        at (datetime.datetime):
        outcome (DeadLetterReplayRecordOutcome): `replayed`: the event went back to its stage; `skipped`: nothing left
            to re-drive (the version completed or is gone).
        detail (str): Why the replay was skipped; empty when replayed.
        by (str): Who replayed it: an account or key id, or `cli`.
    """

    at: datetime.datetime
    outcome: DeadLetterReplayRecordOutcome
    detail: str
    by: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        outcome = self.outcome.value

        detail = self.detail

        by = self.by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "outcome": outcome,
                "detail": detail,
                "by": by,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        outcome = DeadLetterReplayRecordOutcome(d.pop("outcome"))

        detail = d.pop("detail")

        by = d.pop("by")

        dead_letter_replay_record = cls(
            at=at,
            outcome=outcome,
            detail=detail,
            by=by,
        )

        dead_letter_replay_record.additional_properties = d
        return dead_letter_replay_record

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
