from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dead_letter_stage import DeadLetterStage

if TYPE_CHECKING:
    from ..models.dead_letter_replay_record import DeadLetterReplayRecord
    from ..models.dead_letter_source import DeadLetterSource


T = TypeVar("T", bound="DeadLetter")


@_attrs_define
class DeadLetter:
    """An event a stage gave up on, with the failure.

    Attributes:
        id (str): Id of the dead letter (every copy left by a redelivered event shares it).
        stage (DeadLetterStage):
        document_id (None | str):
        workspace_id (None | str):
        version (int | None):
        error_code (str): Error catalogue code, e.g. `corrupt-file`.
        error_message (str):
        attempts (int): Attempts the stage spent (waits for unavailable engines spend none).
        dead_lettered_at (datetime.datetime):
        source (DeadLetterSource):
        copies (int): How many times the dead-letter topic holds it.
        replay (DeadLetterReplayRecord | None):
    """

    id: str
    stage: DeadLetterStage
    document_id: None | str
    workspace_id: None | str
    version: int | None
    error_code: str
    error_message: str
    attempts: int
    dead_lettered_at: datetime.datetime
    source: DeadLetterSource
    copies: int
    replay: DeadLetterReplayRecord | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.dead_letter_replay_record import DeadLetterReplayRecord

        id = self.id

        stage = self.stage.value

        document_id: None | str
        document_id = self.document_id

        workspace_id: None | str
        workspace_id = self.workspace_id

        version: int | None
        version = self.version

        error_code = self.error_code

        error_message = self.error_message

        attempts = self.attempts

        dead_lettered_at = self.dead_lettered_at.isoformat()

        source = self.source.to_dict()

        copies = self.copies

        replay: dict[str, Any] | None
        if isinstance(self.replay, DeadLetterReplayRecord):
            replay = self.replay.to_dict()
        else:
            replay = self.replay

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "stage": stage,
                "document_id": document_id,
                "workspace_id": workspace_id,
                "version": version,
                "error_code": error_code,
                "error_message": error_message,
                "attempts": attempts,
                "dead_lettered_at": dead_lettered_at,
                "source": source,
                "copies": copies,
                "replay": replay,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.dead_letter_replay_record import DeadLetterReplayRecord
        from ..models.dead_letter_source import DeadLetterSource

        d = dict(src_dict)
        id = d.pop("id")

        stage = DeadLetterStage(d.pop("stage"))

        def _parse_document_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        document_id = _parse_document_id(d.pop("document_id"))

        def _parse_workspace_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        workspace_id = _parse_workspace_id(d.pop("workspace_id"))

        def _parse_version(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        version = _parse_version(d.pop("version"))

        error_code = d.pop("error_code")

        error_message = d.pop("error_message")

        attempts = d.pop("attempts")

        dead_lettered_at = datetime.datetime.fromisoformat(d.pop("dead_lettered_at"))

        source = DeadLetterSource.from_dict(d.pop("source"))

        copies = d.pop("copies")

        def _parse_replay(data: object) -> DeadLetterReplayRecord | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                replay_type_0 = DeadLetterReplayRecord.from_dict(data)

                return replay_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeadLetterReplayRecord | None, data)

        replay = _parse_replay(d.pop("replay"))

        dead_letter = cls(
            id=id,
            stage=stage,
            document_id=document_id,
            workspace_id=workspace_id,
            version=version,
            error_code=error_code,
            error_message=error_message,
            attempts=attempts,
            dead_lettered_at=dead_lettered_at,
            source=source,
            copies=copies,
            replay=replay,
        )

        dead_letter.additional_properties = d
        return dead_letter

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
