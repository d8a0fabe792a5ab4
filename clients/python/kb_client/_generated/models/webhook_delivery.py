from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.webhook_delivery_status import WebhookDeliveryStatus

if TYPE_CHECKING:
    from ..models.webhook_delivery_attempt_log_item import WebhookDeliveryAttemptLogItem


T = TypeVar("T", bound="WebhookDelivery")


@_attrs_define
class WebhookDelivery:
    """One event to deliver to the endpoint, with its attempts.

    Attributes:
        id (str):
        endpoint_id (str):
        event_id (str): The `webhook-id` header of every attempt.
        event_type (str):
        document_id (None | str):
        source_id (None | str):
        status (WebhookDeliveryStatus):
        attempts (int):
        next_attempt_at (datetime.datetime | None):
        created_at (datetime.datetime):
        delivered_at (datetime.datetime | None):
        attempt_log (list[WebhookDeliveryAttemptLogItem]):
    """

    id: str
    endpoint_id: str
    event_id: str
    event_type: str
    document_id: None | str
    source_id: None | str
    status: WebhookDeliveryStatus
    attempts: int
    next_attempt_at: datetime.datetime | None
    created_at: datetime.datetime
    delivered_at: datetime.datetime | None
    attempt_log: list[WebhookDeliveryAttemptLogItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        endpoint_id = self.endpoint_id

        event_id = self.event_id

        event_type = self.event_type

        document_id: None | str
        document_id = self.document_id

        source_id: None | str
        source_id = self.source_id

        status = self.status.value

        attempts = self.attempts

        next_attempt_at: None | str
        if isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        created_at = self.created_at.isoformat()

        delivered_at: None | str
        if isinstance(self.delivered_at, datetime.datetime):
            delivered_at = self.delivered_at.isoformat()
        else:
            delivered_at = self.delivered_at

        attempt_log = []
        for attempt_log_item_data in self.attempt_log:
            attempt_log_item = attempt_log_item_data.to_dict()
            attempt_log.append(attempt_log_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "event_type": event_type,
                "document_id": document_id,
                "source_id": source_id,
                "status": status,
                "attempts": attempts,
                "next_attempt_at": next_attempt_at,
                "created_at": created_at,
                "delivered_at": delivered_at,
                "attempt_log": attempt_log,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.webhook_delivery_attempt_log_item import (
            WebhookDeliveryAttemptLogItem,
        )

        d = dict(src_dict)
        id = d.pop("id")

        endpoint_id = d.pop("endpoint_id")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        def _parse_document_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        document_id = _parse_document_id(d.pop("document_id"))

        def _parse_source_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_id = _parse_source_id(d.pop("source_id"))

        status = WebhookDeliveryStatus(d.pop("status"))

        attempts = d.pop("attempts")

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_delivered_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                delivered_at_type_0 = datetime.datetime.fromisoformat(data)

                return delivered_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        delivered_at = _parse_delivered_at(d.pop("delivered_at"))

        attempt_log = []
        _attempt_log = d.pop("attempt_log")
        for attempt_log_item_data in _attempt_log:
            attempt_log_item = WebhookDeliveryAttemptLogItem.from_dict(
                attempt_log_item_data
            )

            attempt_log.append(attempt_log_item)

        webhook_delivery = cls(
            id=id,
            endpoint_id=endpoint_id,
            event_id=event_id,
            event_type=event_type,
            document_id=document_id,
            source_id=source_id,
            status=status,
            attempts=attempts,
            next_attempt_at=next_attempt_at,
            created_at=created_at,
            delivered_at=delivered_at,
            attempt_log=attempt_log,
        )

        webhook_delivery.additional_properties = d
        return webhook_delivery

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
