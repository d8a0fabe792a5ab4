from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.document_lookup import DocumentLookup
from ...models.document_lookup_result import DocumentLookupResult
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    *,
    body: DocumentLookup,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/documents/lookup",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DocumentLookupResult | Problem | None:
    if response.status_code == 200:
        response_200 = DocumentLookupResult.from_dict(response.json())

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

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

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
) -> Response[DocumentLookupResult | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DocumentLookup,
) -> Response[DocumentLookupResult | Problem]:
    """Find documents by source item

     Answers the documents uploaded with any of the given (`source`, `source_item`) pairs, each with its
    latest version and content hash, so that a bulk loader tells new, changed and unchanged files apart
    with one request per batch instead of one per file. Reads only (an `Idempotency-Key` is not needed).

    Args:
        body (DocumentLookup):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DocumentLookupResult | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: DocumentLookup,
) -> DocumentLookupResult | Problem | None:
    """Find documents by source item

     Answers the documents uploaded with any of the given (`source`, `source_item`) pairs, each with its
    latest version and content hash, so that a bulk loader tells new, changed and unchanged files apart
    with one request per batch instead of one per file. Reads only (an `Idempotency-Key` is not needed).

    Args:
        body (DocumentLookup):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DocumentLookupResult | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DocumentLookup,
) -> Response[DocumentLookupResult | Problem]:
    """Find documents by source item

     Answers the documents uploaded with any of the given (`source`, `source_item`) pairs, each with its
    latest version and content hash, so that a bulk loader tells new, changed and unchanged files apart
    with one request per batch instead of one per file. Reads only (an `Idempotency-Key` is not needed).

    Args:
        body (DocumentLookup):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DocumentLookupResult | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: DocumentLookup,
) -> DocumentLookupResult | Problem | None:
    """Find documents by source item

     Answers the documents uploaded with any of the given (`source`, `source_item`) pairs, each with its
    latest version and content hash, so that a bulk loader tells new, changed and unchanged files apart
    with one request per batch instead of one per file. Reads only (an `Idempotency-Key` is not needed).

    Args:
        body (DocumentLookup):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DocumentLookupResult | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
