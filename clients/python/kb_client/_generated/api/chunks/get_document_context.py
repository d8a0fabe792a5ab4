from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.chunk_window import ChunkWindow
from ...models.document_text import DocumentText
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    document_id: str,
    *,
    version: int | Unset = UNSET,
    chunk_id: str | Unset = UNSET,
    window: int | Unset = 2,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["version"] = version

    params["chunk_id"] = chunk_id

    params["window"] = window

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/chunks/{document_id}/context".format(
            document_id=quote(str(document_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChunkWindow | DocumentText | Problem | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> ChunkWindow | DocumentText:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_document_context_type_0 = DocumentText.from_dict(data)

                return componentsschemas_document_context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_document_context_type_1 = ChunkWindow.from_dict(data)

            return componentsschemas_document_context_type_1

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

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
) -> Response[ChunkWindow | DocumentText | Problem]:
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
    chunk_id: str | Unset = UNSET,
    window: int | Unset = 2,
) -> Response[ChunkWindow | DocumentText | Problem]:
    """Extracted text of a document, or one chunk with its neighbours

     Without `chunk_id`: the full extracted text. With `chunk_id`: that chunk and `window` chunks on each
    side (default 2, at most 20).

    Args:
        document_id (str):
        version (int | Unset):
        chunk_id (str | Unset):
        window (int | Unset):  Default: 2.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkWindow | DocumentText | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        version=version,
        chunk_id=chunk_id,
        window=window,
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
    chunk_id: str | Unset = UNSET,
    window: int | Unset = 2,
) -> ChunkWindow | DocumentText | Problem | None:
    """Extracted text of a document, or one chunk with its neighbours

     Without `chunk_id`: the full extracted text. With `chunk_id`: that chunk and `window` chunks on each
    side (default 2, at most 20).

    Args:
        document_id (str):
        version (int | Unset):
        chunk_id (str | Unset):
        window (int | Unset):  Default: 2.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkWindow | DocumentText | Problem
    """

    return sync_detailed(
        document_id=document_id,
        client=client,
        version=version,
        chunk_id=chunk_id,
        window=window,
    ).parsed


async def asyncio_detailed(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    chunk_id: str | Unset = UNSET,
    window: int | Unset = 2,
) -> Response[ChunkWindow | DocumentText | Problem]:
    """Extracted text of a document, or one chunk with its neighbours

     Without `chunk_id`: the full extracted text. With `chunk_id`: that chunk and `window` chunks on each
    side (default 2, at most 20).

    Args:
        document_id (str):
        version (int | Unset):
        chunk_id (str | Unset):
        window (int | Unset):  Default: 2.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChunkWindow | DocumentText | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        version=version,
        chunk_id=chunk_id,
        window=window,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    document_id: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
    chunk_id: str | Unset = UNSET,
    window: int | Unset = 2,
) -> ChunkWindow | DocumentText | Problem | None:
    """Extracted text of a document, or one chunk with its neighbours

     Without `chunk_id`: the full extracted text. With `chunk_id`: that chunk and `window` chunks on each
    side (default 2, at most 20).

    Args:
        document_id (str):
        version (int | Unset):
        chunk_id (str | Unset):
        window (int | Unset):  Default: 2.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChunkWindow | DocumentText | Problem
    """

    return (
        await asyncio_detailed(
            document_id=document_id,
            client=client,
            version=version,
            chunk_id=chunk_id,
            window=window,
        )
    ).parsed
