from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ingest_progress_stage import IngestProgressStage

T = TypeVar("T", bound="IngestProgress")


@_attrs_define
class IngestProgress:
    """Present while the version is `processing`: how far its ingestion is.

    Attributes:
        stage (IngestProgressStage):
        chunks_done (int): Chunks the stage has finished.
        chunks_total (int): Chunks of the version; 0 until it is chunked.
    """

    stage: IngestProgressStage
    chunks_done: int
    chunks_total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        stage = self.stage.value

        chunks_done = self.chunks_done

        chunks_total = self.chunks_total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "stage": stage,
                "chunks_done": chunks_done,
                "chunks_total": chunks_total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        stage = IngestProgressStage(d.pop("stage"))

        chunks_done = d.pop("chunks_done")

        chunks_total = d.pop("chunks_total")

        ingest_progress = cls(
            stage=stage,
            chunks_done=chunks_done,
            chunks_total=chunks_total,
        )

        ingest_progress.additional_properties = d
        return ingest_progress

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
