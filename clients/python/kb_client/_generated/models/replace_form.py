from __future__ import annotations

import json
from collections.abc import Mapping
from io import BytesIO
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from .. import types
from ..types import UNSET, File, Unset

if TYPE_CHECKING:
    from ..models.replace_form_metadata import ReplaceFormMetadata


T = TypeVar("T", bound="ReplaceForm")


@_attrs_define
class ReplaceForm:
    """Unknown form fields are refused (422).

    Attributes:
        file (File): The new content (up to 52428800 bytes).
        metadata (ReplaceFormMetadata | Unset): A JSON object replacing the metadata (same limits as on upload); omitted
            keeps it.
        change_reason (str | Unset):
    """

    file: File
    metadata: ReplaceFormMetadata | Unset = UNSET
    change_reason: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        file = self.file.to_tuple()

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        change_reason = self.change_reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "file": file,
            }
        )
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if change_reason is not UNSET:
            field_dict["change_reason"] = change_reason

        return field_dict

    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("file", self.file.to_tuple()))

        if not isinstance(self.metadata, Unset):
            files.append(
                (
                    "metadata",
                    (
                        None,
                        json.dumps(self.metadata.to_dict()).encode(),
                        "application/json",
                    ),
                )
            )

        if not isinstance(self.change_reason, Unset):
            files.append(
                (
                    "change_reason",
                    (None, str(self.change_reason).encode(), "text/plain"),
                )
            )

        return files

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.replace_form_metadata import ReplaceFormMetadata

        d = dict(src_dict)
        file = File(payload=BytesIO(d.pop("file")))

        _metadata = d.pop("metadata", UNSET)
        metadata: ReplaceFormMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = ReplaceFormMetadata.from_dict(_metadata)

        change_reason = d.pop("change_reason", UNSET)

        replace_form = cls(
            file=file,
            metadata=metadata,
            change_reason=change_reason,
        )

        return replace_form
