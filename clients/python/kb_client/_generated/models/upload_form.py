from __future__ import annotations

import json
from collections.abc import Mapping
from io import BytesIO
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from .. import types
from ..types import UNSET, File, Unset

if TYPE_CHECKING:
    from ..models.upload_form_metadata import UploadFormMetadata


T = TypeVar("T", bound="UploadForm")


@_attrs_define
class UploadForm:
    """Unknown form fields are refused (422).

    Attributes:
        file (File): The file (up to 52428800 bytes).
        metadata (UploadFormMetadata | Unset): The metadata, a JSON object: at most 64 keys (a `change_reason` key
            counts), keys up to 128 characters, at most 16 KiB serialised, nested at most 32 levels. A `change_reason` key
            is moved to the version.
        source (str | Unset): Where the document comes from (default `upload`).
        source_item (str | Unset): The item within `source` the document stands for (a path relative to the loaded
            folder, an object key, a URL): read back as `source_item`, and found again by `POST /documents/lookup`.
        change_reason (str | Unset):
    """

    file: File
    metadata: UploadFormMetadata | Unset = UNSET
    source: str | Unset = UNSET
    source_item: str | Unset = UNSET
    change_reason: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        file = self.file.to_tuple()

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        source = self.source

        source_item = self.source_item

        change_reason = self.change_reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "file": file,
            }
        )
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if source is not UNSET:
            field_dict["source"] = source
        if source_item is not UNSET:
            field_dict["source_item"] = source_item
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

        if not isinstance(self.source, Unset):
            files.append(("source", (None, str(self.source).encode(), "text/plain")))

        if not isinstance(self.source_item, Unset):
            files.append(
                ("source_item", (None, str(self.source_item).encode(), "text/plain"))
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
        from ..models.upload_form_metadata import UploadFormMetadata

        d = dict(src_dict)
        file = File(payload=BytesIO(d.pop("file")))

        _metadata = d.pop("metadata", UNSET)
        metadata: UploadFormMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = UploadFormMetadata.from_dict(_metadata)

        source = d.pop("source", UNSET)

        source_item = d.pop("source_item", UNSET)

        change_reason = d.pop("change_reason", UNSET)

        upload_form = cls(
            file=file,
            metadata=metadata,
            source=source,
            source_item=source_item,
            change_reason=change_reason,
        )

        return upload_form
