from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_filters_metadata import SearchFiltersMetadata


T = TypeVar("T", bound="SearchFilters")


@_attrs_define
class SearchFilters:
    """
    Attributes:
        document_ids (list[str] | Unset):
        metadata (SearchFiltersMetadata | Unset): Metadata `key` equals the value, or one of the values; at most 64 keys
            (all must match).
        mime_types (list[str] | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):
    """

    document_ids: list[str] | Unset = UNSET
    metadata: SearchFiltersMetadata | Unset = UNSET
    mime_types: list[str] | Unset = UNSET
    created_after: datetime.datetime | Unset = UNSET
    created_before: datetime.datetime | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        document_ids: list[str] | Unset = UNSET
        if not isinstance(self.document_ids, Unset):
            document_ids = self.document_ids

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        mime_types: list[str] | Unset = UNSET
        if not isinstance(self.mime_types, Unset):
            mime_types = self.mime_types

        created_after: str | Unset = UNSET
        if not isinstance(self.created_after, Unset):
            created_after = self.created_after.isoformat()

        created_before: str | Unset = UNSET
        if not isinstance(self.created_before, Unset):
            created_before = self.created_before.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if document_ids is not UNSET:
            field_dict["document_ids"] = document_ids
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if mime_types is not UNSET:
            field_dict["mime_types"] = mime_types
        if created_after is not UNSET:
            field_dict["created_after"] = created_after
        if created_before is not UNSET:
            field_dict["created_before"] = created_before

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_filters_metadata import SearchFiltersMetadata

        d = dict(src_dict)
        document_ids = cast(list[str], d.pop("document_ids", UNSET))

        _metadata = d.pop("metadata", UNSET)
        metadata: SearchFiltersMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = SearchFiltersMetadata.from_dict(_metadata)

        mime_types = cast(list[str], d.pop("mime_types", UNSET))

        _created_after = d.pop("created_after", UNSET)
        created_after: datetime.datetime | Unset
        if isinstance(_created_after, Unset):
            created_after = UNSET
        else:
            created_after = datetime.datetime.fromisoformat(_created_after)

        _created_before = d.pop("created_before", UNSET)
        created_before: datetime.datetime | Unset
        if isinstance(_created_before, Unset):
            created_before = UNSET
        else:
            created_before = datetime.datetime.fromisoformat(_created_before)

        search_filters = cls(
            document_ids=document_ids,
            metadata=metadata,
            mime_types=mime_types,
            created_after=created_after,
            created_before=created_before,
        )

        return search_filters
