from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.create_webhook_request_events_item import CreateWebhookRequestEventsItem
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateWebhookRequest")


@_attrs_define
class CreateWebhookRequest:
    """
    Attributes:
        url (str): http(s) URL receiving POSTs. Loopback, private and link-local targets are refused (422) unless the
            operator set KB_OUTBOUND_ALLOW_PRIVATE=true.
        events (list[CreateWebhookRequestEventsItem]): Event types the endpoint receives; `["*"]` for every type
            (including types added later).
        description (None | str | Unset):
    """

    url: str
    events: list[CreateWebhookRequestEventsItem]
    description: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "events": events,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = CreateWebhookRequestEventsItem(events_item_data)

            events.append(events_item)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        create_webhook_request = cls(
            url=url,
            events=events,
            description=description,
        )

        return create_webhook_request
