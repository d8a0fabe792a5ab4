from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audit_actor_type import AuditActorType
from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditActor")


@_attrs_define
class AuditActor:
    """
    Attributes:
        type_ (AuditActorType): Who made the change: `api_key` (its id), `user` (a dashboard account's id) or `source`
            (a source's sync run: the source's id).
        id (str):
        name (str | Unset): The source's name when it made the change (type `source` only).
    """

    type_: AuditActorType
    id: str
    name: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        id = self.id

        name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "id": id,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = AuditActorType(d.pop("type"))

        id = d.pop("id")

        name = d.pop("name", UNSET)

        audit_actor = cls(
            type_=type_,
            id=id,
            name=name,
        )

        audit_actor.additional_properties = d
        return audit_actor

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
