from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.chunk_list import ChunkList
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    document_id: str,
    *,
    version: int | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["version"] = version

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/chunks/{document_id}".format(
            document_id=quote(str(document_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChunkList | Problem | None:
    if response.status_code == 200:
        response_200 = ChunkList.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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
) -> Response[ChunkList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Response[ChunkList | Problem]:
    """Chunks of a document

     The current version by default, or `version`. Up to 1000 chunks a page; cursor paging beyond.

    Args:
        document_id (str):
        version (int | Unset):
        limit (int | Unset):  Default: 1000.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkList | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        version=version,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> ChunkList | Problem | None:
    """Chunks of a document

     The current version by default, or `version`. Up to 1000 chunks a page; cursor paging beyond.

    Args:
        document_id (str):
        version (int | Unset):
        limit (int | Unset):  Default: 1000.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkList | Problem
    """

    return sync_detailed(
        document_id=document_id,
        client=client,
        version=version,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> Response[ChunkList | Problem]:
    """Chunks of a document

     The current version by default, or `version`. Up to 1000 chunks a page; cursor paging beyond.

    Args:
        document_id (str):
        version (int | Unset):
        limit (int | Unset):  Default: 1000.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkList | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        version=version,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: str | Unset = UNSET,
) -> ChunkList | Problem | None:
    """Chunks of a document

     The current version by default, or `version`. Up to 1000 chunks a page; cursor paging beyond.

    Args:
        document_id (str):
        version (int | Unset):
        limit (int | Unset):  Default: 1000.
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkList | Problem
    """

    return (
        await asyncio_detailed(
            document_id=document_id,
            client=client,
            version=version,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
