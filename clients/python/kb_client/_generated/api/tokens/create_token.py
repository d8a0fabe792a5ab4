from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.scoped_token import ScopedToken
from ...models.token_request import TokenRequest
from ...types import Response


def _get_kwargs(
    *,
    body: TokenRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/tokens",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ScopedToken | None:
    if response.status_code == 201:
        response_201 = ScopedToken.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
) -> Response[Problem | ScopedToken]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Response[Problem | ScopedToken]:
    """Mint a scoped token for an end user

     A short-lived token (a signed JWT) to hand to an end user's client, such as a help-centre widget: it
    reads and searches only the documents its rules let through. `filters` take the search filter
    language (metadata, `document_ids`, `mime_types`, creation dates) and `sources` source names; a
    document version is visible when it matches all of them. Every search of the token is narrowed to
    its rules (a request's own filters can only narrow them further); every document, version, chunk,
    context, diff and event outside them answers 404 or is left out, as for another workspace's. Its
    permissions are `read` and/or `search`, never more than the key's; it never writes and cannot mint
    tokens. It counts against the minting key's rate limit, is logged under that key, and stops working
    at `expires_at` or when the key is revoked. Needs a key with `read` or `search`.

    Args:
        body (TokenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScopedToken]
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
    body: TokenRequest,
) -> Problem | ScopedToken | None:
    """Mint a scoped token for an end user

     A short-lived token (a signed JWT) to hand to an end user's client, such as a help-centre widget: it
    reads and searches only the documents its rules let through. `filters` take the search filter
    language (metadata, `document_ids`, `mime_types`, creation dates) and `sources` source names; a
    document version is visible when it matches all of them. Every search of the token is narrowed to
    its rules (a request's own filters can only narrow them further); every document, version, chunk,
    context, diff and event outside them answers 404 or is left out, as for another workspace's. Its
    permissions are `read` and/or `search`, never more than the key's; it never writes and cannot mint
    tokens. It counts against the minting key's rate limit, is logged under that key, and stops working
    at `expires_at` or when the key is revoked. Needs a key with `read` or `search`.

    Args:
        body (TokenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScopedToken
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Response[Problem | ScopedToken]:
    """Mint a scoped token for an end user

     A short-lived token (a signed JWT) to hand to an end user's client, such as a help-centre widget: it
    reads and searches only the documents its rules let through. `filters` take the search filter
    language (metadata, `document_ids`, `mime_types`, creation dates) and `sources` source names; a
    document version is visible when it matches all of them. Every search of the token is narrowed to
    its rules (a request's own filters can only narrow them further); every document, version, chunk,
    context, diff and event outside them answers 404 or is left out, as for another workspace's. Its
    permissions are `read` and/or `search`, never more than the key's; it never writes and cannot mint
    tokens. It counts against the minting key's rate limit, is logged under that key, and stops working
    at `expires_at` or when the key is revoked. Needs a key with `read` or `search`.

    Args:
        body (TokenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ScopedToken]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Problem | ScopedToken | None:
    """Mint a scoped token for an end user

     A short-lived token (a signed JWT) to hand to an end user's client, such as a help-centre widget: it
    reads and searches only the documents its rules let through. `filters` take the search filter
    language (metadata, `document_ids`, `mime_types`, creation dates) and `sources` source names; a
    document version is visible when it matches all of them. Every search of the token is narrowed to
    its rules (a request's own filters can only narrow them further); every document, version, chunk,
    context, diff and event outside them answers 404 or is left out, as for another workspace's. Its
    permissions are `read` and/or `search`, never more than the key's; it never writes and cannot mint
    tokens. It counts against the minting key's rate limit, is logged under that key, and stops working
    at `expires_at` or when the key is revoked. Needs a key with `read` or `search`.

    Args:
        body (TokenRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ScopedToken
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
