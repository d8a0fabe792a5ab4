from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.audit_actor import AuditActor
    from ..models.audit_snapshot import AuditSnapshot


T = TypeVar("T", bound="AuditEntry")


@_attrs_define
class AuditEntry:
    """One change, who made it and when.

    Attributes:
        id (str):
        action (str):
        workspace_id (str):
        document_id (str):
        actor (AuditActor):
        timestamp (datetime.datetime):
        version (int | None):
        before (AuditSnapshot | None):
        after (AuditSnapshot | None):
        change_reason (None | str):
        trace_id (str):
    """

    id: str
    action: str
    workspace_id: str
    document_id: str
    actor: AuditActor
    timestamp: datetime.datetime
    version: int | None
    before: AuditSnapshot | None
    after: AuditSnapshot | None
    change_reason: None | str
    trace_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.audit_snapshot import AuditSnapshot

        id = self.id

        action = self.action

        workspace_id = self.workspace_id

        document_id = self.document_id

        actor = self.actor.to_dict()

        timestamp = self.timestamp.isoformat()

        version: int | None
        version = self.version

        before: dict[str, Any] | None
        if isinstance(self.before, AuditSnapshot):
            before = self.before.to_dict()
        else:
            before = self.before

        after: dict[str, Any] | None
        if isinstance(self.after, AuditSnapshot):
            after = self.after.to_dict()
        else:
            after = self.after

        change_reason: None | str
        change_reason = self.change_reason

        trace_id = self.trace_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "action": action,
                "workspace_id": workspace_id,
                "document_id": document_id,
                "actor": actor,
                "timestamp": timestamp,
                "version": version,
                "before": before,
                "after": after,
                "change_reason": change_reason,
                "trace_id": trace_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.audit_actor import AuditActor
        from ..models.audit_snapshot import AuditSnapshot

        d = dict(src_dict)
        id = d.pop("id")

        action = d.pop("action")

        workspace_id = d.pop("workspace_id")

        document_id = d.pop("document_id")

        actor = AuditActor.from_dict(d.pop("actor"))

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        def _parse_version(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        version = _parse_version(d.pop("version"))

        def _parse_before(data: object) -> AuditSnapshot | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                before_type_0 = AuditSnapshot.from_dict(data)

                return before_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuditSnapshot | None, data)

        before = _parse_before(d.pop("before"))

        def _parse_after(data: object) -> AuditSnapshot | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                after_type_0 = AuditSnapshot.from_dict(data)

                return after_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuditSnapshot | None, data)

        after = _parse_after(d.pop("after"))

        def _parse_change_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        change_reason = _parse_change_reason(d.pop("change_reason"))

        trace_id = d.pop("trace_id")

        audit_entry = cls(
            id=id,
            action=action,
            workspace_id=workspace_id,
            document_id=document_id,
            actor=actor,
            timestamp=timestamp,
            version=version,
            before=before,
            after=after,
            change_reason=change_reason,
            trace_id=trace_id,
        )

        audit_entry.additional_properties = d
        return audit_entry

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
