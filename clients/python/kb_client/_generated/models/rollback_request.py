from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RollbackRequest")


@_attrs_define
class RollbackRequest:
    """
    Attributes:
        target_version (int): The version whose content and metadata come back.
    """

    target_version: int

    def to_dict(self) -> dict[str, Any]:
        target_version = self.target_version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "target_version": target_version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        target_version = d.pop("target_version")

        rollback_request = cls(
            target_version=target_version,
        )

        return rollback_request
