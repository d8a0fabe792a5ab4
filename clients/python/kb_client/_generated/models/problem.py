from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_error import FieldError
    from ..models.problem_error import ProblemError


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """RFC 7807 problem details (`application/problem+json`).

    Attributes:
        type_ (str): `<base>/errors/<kind>`; the page at that address explains the kind.
        title (str):
        status (int):
        detail (str):
        instance (str): Request path.
        trace_id (UUID): Same value as the `X-Request-Id` response header.
        timestamp (datetime.datetime):
        errors (list[FieldError] | Unset): Each failed field (422).
        error (ProblemError | Unset): Alternative error member on 401, 403 and 429.
    """

    type_: str
    title: str
    status: int
    detail: str
    instance: str
    trace_id: UUID
    timestamp: datetime.datetime
    errors: list[FieldError] | Unset = UNSET
    error: ProblemError | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        instance = self.instance

        trace_id = str(self.trace_id)

        timestamp = self.timestamp.isoformat()

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)

        error: dict[str, Any] | Unset = UNSET
        if not isinstance(self.error, Unset):
            error = self.error.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "title": title,
                "status": status,
                "detail": detail,
                "instance": instance,
                "trace_id": trace_id,
                "timestamp": timestamp,
            }
        )
        if errors is not UNSET:
            field_dict["errors"] = errors
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.field_error import FieldError
        from ..models.problem_error import ProblemError

        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        instance = d.pop("instance")

        trace_id = UUID(d.pop("trace_id"))

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        _errors = d.pop("errors", UNSET)
        errors: list[FieldError] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldError.from_dict(errors_item_data)

                errors.append(errors_item)

        _error = d.pop("error", UNSET)
        error: ProblemError | Unset
        if isinstance(_error, Unset):
            error = UNSET
        else:
            error = ProblemError.from_dict(_error)

        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            instance=instance,
            trace_id=trace_id,
            timestamp=timestamp,
            errors=errors,
            error=error,
        )

        problem.additional_properties = d
        return problem

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
