from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SourceRunCounts")


@_attrs_define
class SourceRunCounts:
    """
    Attributes:
        seen (int): Items the source listed (matching the patterns).
        created (int): New documents.
        updated (int): New versions of documents whose item changed.
        unchanged (int):
        deleted (int): Documents deleted (not purged) because their item is gone.
        failed (int): Items that failed (listed in `errors`); the run goes on.
        deletions_held (int): Documents whose item is gone but which were kept: too many would have been deleted.
    """

    seen: int
    created: int
    updated: int
    unchanged: int
    deleted: int
    failed: int
    deletions_held: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seen = self.seen

        created = self.created

        updated = self.updated

        unchanged = self.unchanged

        deleted = self.deleted

        failed = self.failed

        deletions_held = self.deletions_held

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seen": seen,
                "created": created,
                "updated": updated,
                "unchanged": unchanged,
                "deleted": deleted,
                "failed": failed,
                "deletions_held": deletions_held,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        seen = d.pop("seen")

        created = d.pop("created")

        updated = d.pop("updated")

        unchanged = d.pop("unchanged")

        deleted = d.pop("deleted")

        failed = d.pop("failed")

        deletions_held = d.pop("deletions_held")

        source_run_counts = cls(
            seen=seen,
            created=created,
            updated=updated,
            unchanged=unchanged,
            deleted=deleted,
            failed=failed,
            deletions_held=deletions_held,
        )

        source_run_counts.additional_properties = d
        return source_run_counts

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
