from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.metadata_update_metadata import MetadataUpdateMetadata


T = TypeVar("T", bound="MetadataUpdate")


@_attrs_define
class MetadataUpdate:
    """
    Attributes:
        metadata (MetadataUpdateMetadata): The new metadata (replaces the current one), with the limits of the upload
            form: at most 64 keys (a `change_reason` key counts), keys up to 128 characters, at most 16 KiB serialised,
            nested at most 32 levels. A `change_reason` key is moved to the version. No `__proto__` key, at any depth.
        change_reason (None | str | Unset):
    """

    metadata: MetadataUpdateMetadata
    change_reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        metadata = self.metadata.to_dict()

        change_reason: None | str | Unset
        if isinstance(self.change_reason, Unset):
            change_reason = UNSET
        else:
            change_reason = self.change_reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "metadata": metadata,
            }
        )
        if change_reason is not UNSET:
            field_dict["change_reason"] = change_reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.metadata_update_metadata import MetadataUpdateMetadata

        d = dict(src_dict)
        metadata = MetadataUpdateMetadata.from_dict(d.pop("metadata"))

        def _parse_change_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        change_reason = _parse_change_reason(d.pop("change_reason", UNSET))

        metadata_update = cls(
            metadata=metadata,
            change_reason=change_reason,
        )

        return metadata_update
