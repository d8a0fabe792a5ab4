from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.source_credentials import SourceCredentials
from ..models.source_kind import SourceKind
from ..models.source_status import SourceStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_metadata import SourceMetadata
    from ..models.source_run import SourceRun


T = TypeVar("T", bound="Source")


@_attrs_define
class Source:
    """A source of synchronisation and its last run.

    Attributes:
        id (UUID):
        name (str):
        kind (SourceKind):
        include (list[str]):
        exclude (list[str]):
        metadata (SourceMetadata):
        schedule (None | str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        status (SourceStatus): The last run's status.
        last_run (None | SourceRun):
        path (str | Unset): `folder`: the directory, symlinks resolved.
        urls (list[str] | Unset): `web`: the pages.
        sitemap (str | Unset): `web`: the sitemap.
        endpoint (str | Unset): `s3`: the endpoint.
        bucket (str | Unset):
        prefix (str | Unset):
        region (None | str | Unset):
        credentials (SourceCredentials | Unset): `s3`: whether credentials are stored (encrypted). They are never shown.
    """

    id: UUID
    name: str
    kind: SourceKind
    include: list[str]
    exclude: list[str]
    metadata: SourceMetadata
    schedule: None | str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    status: SourceStatus
    last_run: None | SourceRun
    path: str | Unset = UNSET
    urls: list[str] | Unset = UNSET
    sitemap: str | Unset = UNSET
    endpoint: str | Unset = UNSET
    bucket: str | Unset = UNSET
    prefix: str | Unset = UNSET
    region: None | str | Unset = UNSET
    credentials: SourceCredentials | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_run import SourceRun

        id = str(self.id)

        name = self.name

        kind = self.kind.value

        include = self.include

        exclude = self.exclude

        metadata = self.metadata.to_dict()

        schedule: None | str
        schedule = self.schedule

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        status = self.status.value

        last_run: dict[str, Any] | None
        if isinstance(self.last_run, SourceRun):
            last_run = self.last_run.to_dict()
        else:
            last_run = self.last_run

        path = self.path

        urls: list[str] | Unset = UNSET
        if not isinstance(self.urls, Unset):
            urls = self.urls

        sitemap = self.sitemap

        endpoint = self.endpoint

        bucket = self.bucket

        prefix = self.prefix

        region: None | str | Unset
        if isinstance(self.region, Unset):
            region = UNSET
        else:
            region = self.region

        credentials: str | Unset = UNSET
        if not isinstance(self.credentials, Unset):
            credentials = self.credentials.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "kind": kind,
                "include": include,
                "exclude": exclude,
                "metadata": metadata,
                "schedule": schedule,
                "created_at": created_at,
                "updated_at": updated_at,
                "status": status,
                "last_run": last_run,
            }
        )
        if path is not UNSET:
            field_dict["path"] = path
        if urls is not UNSET:
            field_dict["urls"] = urls
        if sitemap is not UNSET:
            field_dict["sitemap"] = sitemap
        if endpoint is not UNSET:
            field_dict["endpoint"] = endpoint
        if bucket is not UNSET:
            field_dict["bucket"] = bucket
        if prefix is not UNSET:
            field_dict["prefix"] = prefix
        if region is not UNSET:
            field_dict["region"] = region
        if credentials is not UNSET:
            field_dict["credentials"] = credentials

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_metadata import SourceMetadata
        from ..models.source_run import SourceRun

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        kind = SourceKind(d.pop("kind"))

        include = cast(list[str], d.pop("include"))

        exclude = cast(list[str], d.pop("exclude"))

        metadata = SourceMetadata.from_dict(d.pop("metadata"))

        def _parse_schedule(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        schedule = _parse_schedule(d.pop("schedule"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        status = SourceStatus(d.pop("status"))

        def _parse_last_run(data: object) -> None | SourceRun:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_run_type_0 = SourceRun.from_dict(data)

                return last_run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceRun, data)

        last_run = _parse_last_run(d.pop("last_run"))

        path = d.pop("path", UNSET)

        urls = cast(list[str], d.pop("urls", UNSET))

        sitemap = d.pop("sitemap", UNSET)

        endpoint = d.pop("endpoint", UNSET)

        bucket = d.pop("bucket", UNSET)

        prefix = d.pop("prefix", UNSET)

        def _parse_region(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        region = _parse_region(d.pop("region", UNSET))

        _credentials = d.pop("credentials", UNSET)
        credentials: SourceCredentials | Unset
        if isinstance(_credentials, Unset):
            credentials = UNSET
        else:
            credentials = SourceCredentials(_credentials)

        source = cls(
            id=id,
            name=name,
            kind=kind,
            include=include,
            exclude=exclude,
            metadata=metadata,
            schedule=schedule,
            created_at=created_at,
            updated_at=updated_at,
            status=status,
            last_run=last_run,
            path=path,
            urls=urls,
            sitemap=sitemap,
            endpoint=endpoint,
            bucket=bucket,
            prefix=prefix,
            region=region,
            credentials=credentials,
        )

        source.additional_properties = d
        return source

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
