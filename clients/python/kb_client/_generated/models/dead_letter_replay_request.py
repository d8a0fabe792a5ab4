from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.dead_letter_replay_request_stage import DeadLetterReplayRequestStage
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeadLetterReplayRequest")


@_attrs_define
class DeadLetterReplayRequest:
    """
    Attributes:
        stage (DeadLetterReplayRequestStage | Unset): Only the dead letters of this stage.
    """

    stage: DeadLetterReplayRequestStage | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        stage: str | Unset = UNSET
        if not isinstance(self.stage, Unset):
            stage = self.stage.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if stage is not UNSET:
            field_dict["stage"] = stage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        _stage = d.pop("stage", UNSET)
        stage: DeadLetterReplayRequestStage | Unset
        if isinstance(_stage, Unset):
            stage = UNSET
        else:
            stage = DeadLetterReplayRequestStage(_stage)

        dead_letter_replay_request = cls(
            stage=stage,
        )

        return dead_letter_replay_request
