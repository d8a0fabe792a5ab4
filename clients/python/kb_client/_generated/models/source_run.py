from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.source_run_status import SourceRunStatus

if TYPE_CHECKING:
    from ..models.source_run_counts import SourceRunCounts
    from ..models.source_run_errors_item import SourceRunErrorsItem


T = TypeVar("T", bound="SourceRun")


@_attrs_define
class SourceRun:
    """One synchronisation run of a source.

    Attributes:
        run_id (UUID):
        source_id (UUID):
        status (SourceRunStatus):
        allow_mass_delete (bool):
        started_at (datetime.datetime):
        finished_at (datetime.datetime | None):
        counts (SourceRunCounts):
        errors (list[SourceRunErrorsItem]): At most 200 entries; `counts.failed` counts them all.
    """

    run_id: UUID
    source_id: UUID
    status: SourceRunStatus
    allow_mass_delete: bool
    started_at: datetime.datetime
    finished_at: datetime.datetime | None
    counts: SourceRunCounts
    errors: list[SourceRunErrorsItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        run_id = str(self.run_id)

        source_id = str(self.source_id)

        status = self.status.value

        allow_mass_delete = self.allow_mass_delete

        started_at = self.started_at.isoformat()

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        counts = self.counts.to_dict()

        errors = []
        for errors_item_data in self.errors:
            errors_item = errors_item_data.to_dict()
            errors.append(errors_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "run_id": run_id,
                "source_id": source_id,
                "status": status,
                "allow_mass_delete": allow_mass_delete,
                "started_at": started_at,
                "finished_at": finished_at,
                "counts": counts,
                "errors": errors,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_run_counts import SourceRunCounts
        from ..models.source_run_errors_item import SourceRunErrorsItem

        d = dict(src_dict)
        run_id = UUID(d.pop("run_id"))

        source_id = UUID(d.pop("source_id"))

        status = SourceRunStatus(d.pop("status"))

        allow_mass_delete = d.pop("allow_mass_delete")

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        counts = SourceRunCounts.from_dict(d.pop("counts"))

        errors = []
        _errors = d.pop("errors")
        for errors_item_data in _errors:
            errors_item = SourceRunErrorsItem.from_dict(errors_item_data)

            errors.append(errors_item)

        source_run = cls(
            run_id=run_id,
            source_id=source_id,
            status=status,
            allow_mass_delete=allow_mass_delete,
            started_at=started_at,
            finished_at=finished_at,
            counts=counts,
            errors=errors,
        )

        source_run.additional_properties = d
        return source_run

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
