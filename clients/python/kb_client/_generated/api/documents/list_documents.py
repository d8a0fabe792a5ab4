import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.document_list import DocumentList
from ...models.document_page import DocumentPage
from ...models.problem import Problem
from ...models.version_status import VersionStatus
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    page: int | Unset = UNSET,
    page_size: int | Unset = UNSET,
    status: VersionStatus | Unset = UNSET,
    source: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["cursor"] = cursor

    params["page"] = page

    params["page_size"] = page_size

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["source"] = source

    json_created_after: str | Unset = UNSET
    if not isinstance(created_after, Unset):
        json_created_after = created_after.isoformat()
    params["created_after"] = json_created_after

    json_created_before: str | Unset = UNSET
    if not isinstance(created_before, Unset):
        json_created_before = created_before.isoformat()
    params["created_before"] = json_created_before

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/documents",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DocumentList | DocumentPage | Problem | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> DocumentList | DocumentPage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_document_list_response_type_0 = (
                    DocumentList.from_dict(data)
                )

                return componentsschemas_document_list_response_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_document_list_response_type_1 = DocumentPage.from_dict(
                data
            )

            return componentsschemas_document_list_response_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DocumentList | DocumentPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    page: int | Unset = UNSET,
    page_size: int | Unset = UNSET,
    status: VersionStatus | Unset = UNSET,
    source: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
) -> Response[DocumentList | DocumentPage | Problem]:
    """List documents

     Newest first (`created_at` desc, then id). Cursor paging by default (`limit`, `cursor`); offset
    paging when `page` or `page_size` is given. `cursor` cannot be combined with `page`/`page_size`, nor
    `limit` with offset paging.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        page (int | Unset):
        page_size (int | Unset):
        status (VersionStatus | Unset):
        source (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DocumentList | DocumentPage | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        page=page,
        page_size=page_size,
        status=status,
        source=source,
        created_after=created_after,
        created_before=created_before,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    page: int | Unset = UNSET,
    page_size: int | Unset = UNSET,
    status: VersionStatus | Unset = UNSET,
    source: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
) -> DocumentList | DocumentPage | Problem | None:
    """List documents

     Newest first (`created_at` desc, then id). Cursor paging by default (`limit`, `cursor`); offset
    paging when `page` or `page_size` is given. `cursor` cannot be combined with `page`/`page_size`, nor
    `limit` with offset paging.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        page (int | Unset):
        page_size (int | Unset):
        status (VersionStatus | Unset):
        source (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DocumentList | DocumentPage | Problem
    """

    return sync_detailed(
        client=client,
        limit=limit,
        cursor=cursor,
        page=page,
        page_size=page_size,
        status=status,
        source=source,
        created_after=created_after,
        created_before=created_before,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    page: int | Unset = UNSET,
    page_size: int | Unset = UNSET,
    status: VersionStatus | Unset = UNSET,
    source: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
) -> Response[DocumentList | DocumentPage | Problem]:
    """List documents

     Newest first (`created_at` desc, then id). Cursor paging by default (`limit`, `cursor`); offset
    paging when `page` or `page_size` is given. `cursor` cannot be combined with `page`/`page_size`, nor
    `limit` with offset paging.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        page (int | Unset):
        page_size (int | Unset):
        status (VersionStatus | Unset):
        source (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DocumentList | DocumentPage | Problem]
    """

    kwargs = _get_kwargs(
        limit=limit,
        cursor=cursor,
        page=page,
        page_size=page_size,
        status=status,
        source=source,
        created_after=created_after,
        created_before=created_before,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    page: int | Unset = UNSET,
    page_size: int | Unset = UNSET,
    status: VersionStatus | Unset = UNSET,
    source: str | Unset = UNSET,
    created_after: datetime.datetime | Unset = UNSET,
    created_before: datetime.datetime | Unset = UNSET,
) -> DocumentList | DocumentPage | Problem | None:
    """List documents

     Newest first (`created_at` desc, then id). Cursor paging by default (`limit`, `cursor`); offset
    paging when `page` or `page_size` is given. `cursor` cannot be combined with `page`/`page_size`, nor
    `limit` with offset paging.

    Args:
        limit (int | Unset):
        cursor (str | Unset):
        page (int | Unset):
        page_size (int | Unset):
        status (VersionStatus | Unset):
        source (str | Unset):
        created_after (datetime.datetime | Unset):
        created_before (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DocumentList | DocumentPage | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            cursor=cursor,
            page=page,
            page_size=page_size,
            status=status,
            source=source,
            created_after=created_after,
            created_before=created_before,
        )
    ).parsed
