from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.create_source_request_kind import CreateSourceRequestKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_source_request_metadata import CreateSourceRequestMetadata


T = TypeVar("T", bound="CreateSourceRequest")


@_attrs_define
class CreateSourceRequest:
    """
    Attributes:
        name (str): Unique in the workspace; becomes the `source` of every document the source synchronises. No control
            characters or bidirectional overrides.
        kind (CreateSourceRequestKind): What is synchronised: a `folder` on the server, `web` pages, or an `s3` bucket.
        path (str | Unset): `folder`: an absolute directory on the server, under one of the roots the operator allows
            (KB_SOURCE_FOLDER_ROOTS); `..` segments and symlinks leading outside are refused (422).
        urls (list[str] | Unset): `web`: the pages to keep in sync (or give `sitemap`).
        sitemap (str | Unset): `web`: a sitemap (or sitemap index, followed one level) whose `<loc>` pages are kept in
            sync.
        endpoint (str | Unset): `s3`: the S3-compatible endpoint, e.g. `https://s3.eu-west-1.amazonaws.com`.
        bucket (str | Unset): `s3`: the bucket.
        prefix (str | Unset): `s3`: only keys under this prefix (patterns match the rest).
        region (str | Unset): `s3`: the region, when it matters.
        access_key (str | Unset): `s3`: with `secret_key`; stored encrypted, never shown.
        secret_key (str | Unset): `s3`: with `access_key`; stored encrypted, never shown.
        include (list[str] | Unset): Glob patterns (`**`, `*.md`, `{a,b}`) over the item's path, object key or URL; only
            matching items are synchronised (default: every non-hidden item).
        exclude (list[str] | Unset): Glob patterns (`**`, `*.md`, `{a,b}`) over the item's path, object key or URL;
            matching items are left out.
        metadata (CreateSourceRequestMetadata | Unset): Metadata given to every document of the source (to the versions
            a sync writes from now on).
        schedule (None | str | Unset):
    """

    name: str
    kind: CreateSourceRequestKind
    path: str | Unset = UNSET
    urls: list[str] | Unset = UNSET
    sitemap: str | Unset = UNSET
    endpoint: str | Unset = UNSET
    bucket: str | Unset = UNSET
    prefix: str | Unset = UNSET
    region: str | Unset = UNSET
    access_key: str | Unset = UNSET
    secret_key: str | Unset = UNSET
    include: list[str] | Unset = UNSET
    exclude: list[str] | Unset = UNSET
    metadata: CreateSourceRequestMetadata | Unset = UNSET
    schedule: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        kind = self.kind.value

        path = self.path

        urls: list[str] | Unset = UNSET
        if not isinstance(self.urls, Unset):
            urls = self.urls

        sitemap = self.sitemap

        endpoint = self.endpoint

        bucket = self.bucket

        prefix = self.prefix

        region = self.region

        access_key = self.access_key

        secret_key = self.secret_key

        include: list[str] | Unset = UNSET
        if not isinstance(self.include, Unset):
            include = self.include

        exclude: list[str] | Unset = UNSET
        if not isinstance(self.exclude, Unset):
            exclude = self.exclude

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        schedule: None | str | Unset
        if isinstance(self.schedule, Unset):
            schedule = UNSET
        else:
            schedule = self.schedule

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "kind": kind,
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
        if access_key is not UNSET:
            field_dict["access_key"] = access_key
        if secret_key is not UNSET:
            field_dict["secret_key"] = secret_key
        if include is not UNSET:
            field_dict["include"] = include
        if exclude is not UNSET:
            field_dict["exclude"] = exclude
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if schedule is not UNSET:
            field_dict["schedule"] = schedule

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.create_source_request_metadata import CreateSourceRequestMetadata

        d = dict(src_dict)
        name = d.pop("name")

        kind = CreateSourceRequestKind(d.pop("kind"))

        path = d.pop("path", UNSET)

        urls = cast(list[str], d.pop("urls", UNSET))

        sitemap = d.pop("sitemap", UNSET)

        endpoint = d.pop("endpoint", UNSET)

        bucket = d.pop("bucket", UNSET)

        prefix = d.pop("prefix", UNSET)

        region = d.pop("region", UNSET)

        access_key = d.pop("access_key", UNSET)

        secret_key = d.pop("secret_key", UNSET)

        include = cast(list[str], d.pop("include", UNSET))

        exclude = cast(list[str], d.pop("exclude", UNSET))

        _metadata = d.pop("metadata", UNSET)
        metadata: CreateSourceRequestMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = CreateSourceRequestMetadata.from_dict(_metadata)

        def _parse_schedule(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        schedule = _parse_schedule(d.pop("schedule", UNSET))

        create_source_request = cls(
            name=name,
            kind=kind,
            path=path,
            urls=urls,
            sitemap=sitemap,
            endpoint=endpoint,
            bucket=bucket,
            prefix=prefix,
            region=region,
            access_key=access_key,
            secret_key=secret_key,
            include=include,
            exclude=exclude,
            metadata=metadata,
            schedule=schedule,
        )

        return create_source_request
