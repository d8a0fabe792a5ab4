from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.check_status import CheckStatus

if TYPE_CHECKING:
    from ..models.readiness_checks import ReadinessChecks


T = TypeVar("T", bound="Readiness")


@_attrs_define
class Readiness:
    """Dependency checks.

    Attributes:
        status (CheckStatus):
        timestamp (datetime.datetime):
        version (str):
        service (str):
        checks (ReadinessChecks): `database`, `vector_store`, and the message log and object store.
    """

    status: CheckStatus
    timestamp: datetime.datetime
    version: str
    service: str
    checks: ReadinessChecks
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        timestamp = self.timestamp.isoformat()

        version = self.version

        service = self.service

        checks = self.checks.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
                "timestamp": timestamp,
                "version": version,
                "service": service,
                "checks": checks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.readiness_checks import ReadinessChecks

        d = dict(src_dict)
        status = CheckStatus(d.pop("status"))

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        version = d.pop("version")

        service = d.pop("service")

        checks = ReadinessChecks.from_dict(d.pop("checks"))

        readiness = cls(
            status=status,
            timestamp=timestamp,
            version=version,
            service=service,
            checks=checks,
        )

        readiness.additional_properties = d
        return readiness

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
