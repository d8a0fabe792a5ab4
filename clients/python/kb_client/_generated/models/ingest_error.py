from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="IngestError")


@_attrs_define
class IngestError:
    """Why ingestion failed.

    Attributes:
        code (str):
        message (str):
        stage (str):
        attempts (int):
        at (datetime.datetime):
    """

    code: str
    message: str
    stage: str
    attempts: int
    at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        message = self.message

        stage = self.stage

        attempts = self.attempts

        at = self.at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "message": message,
                "stage": stage,
                "attempts": attempts,
                "at": at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        message = d.pop("message")

        stage = d.pop("stage")

        attempts = d.pop("attempts")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        ingest_error = cls(
            code=code,
            message=message,
            stage=stage,
            attempts=attempts,
            at=at,
        )

        ingest_error.additional_properties = d
        return ingest_error

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
