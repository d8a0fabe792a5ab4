from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.update_webhook_request_events_item import UpdateWebhookRequestEventsItem
from ..types import UNSET, Unset

T = TypeVar("T", bound="UpdateWebhookRequest")


@_attrs_define
class UpdateWebhookRequest:
    """
    Attributes:
        url (str | Unset): http(s) URL receiving POSTs. Loopback, private and link-local targets are refused (422)
            unless the operator set KB_OUTBOUND_ALLOW_PRIVATE=true.
        events (list[UpdateWebhookRequestEventsItem] | Unset): Event types the endpoint receives; `["*"]` for every type
            (including types added later).
        description (None | str | Unset):
        enabled (bool | Unset): `false` disables the endpoint; `true` enables it again.
        rotate_secret (bool | Unset): `true` replaces the signing secret; the answer shows the new one, once.
    """

    url: str | Unset = UNSET
    events: list[UpdateWebhookRequestEventsItem] | Unset = UNSET
    description: None | str | Unset = UNSET
    enabled: bool | Unset = UNSET
    rotate_secret: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events: list[str] | Unset = UNSET
        if not isinstance(self.events, Unset):
            events = []
            for events_item_data in self.events:
                events_item = events_item_data.value
                events.append(events_item)

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        enabled = self.enabled

        rotate_secret = self.rotate_secret

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if url is not UNSET:
            field_dict["url"] = url
        if events is not UNSET:
            field_dict["events"] = events
        if description is not UNSET:
            field_dict["description"] = description
        if enabled is not UNSET:
            field_dict["enabled"] = enabled
        if rotate_secret is not UNSET:
            field_dict["rotate_secret"] = rotate_secret

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url", UNSET)

        _events = d.pop("events", UNSET)
        events: list[UpdateWebhookRequestEventsItem] | Unset = UNSET
        if _events is not UNSET:
            events = []
            for events_item_data in _events:
                events_item = UpdateWebhookRequestEventsItem(events_item_data)

                events.append(events_item)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        enabled = d.pop("enabled", UNSET)

        rotate_secret = d.pop("rotate_secret", UNSET)

        update_webhook_request = cls(
            url=url,
            events=events,
            description=description,
            enabled=enabled,
            rotate_secret=rotate_secret,
        )

        return update_webhook_request
