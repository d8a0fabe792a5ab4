from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    types: str | Unset = UNSET,
    document_id: UUID | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
    workspace: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["types"] = types

    json_document_id: str | Unset = UNSET
    if not isinstance(document_id, Unset):
        json_document_id = str(document_id)
    params["document_id"] = json_document_id

    params["last_event_id"] = last_event_id

    params["workspace"] = workspace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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
) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    document_id: UUID | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
    workspace: str | Unset = UNSET,
) -> Response[Problem | str]:
    """Live stream of document events (Server-Sent Events)

     The events of the key's workspace as they are committed: `document.version.completed`,
    `document.version.failed`, `document.deleted`, `document.purged`, `source.sync.completed`,
    `source.sync.failed`. Reconnecting with `Last-Event-ID` resumes after that event, as far back as the
    log retains events (7 days by default); an event may come twice around a resume. A signed-in
    dashboard session (cookie) may name one of its account's workspaces in `workspace`, since a
    browser's `EventSource` cannot send `X-KB-Workspace`; an API key always streams its own workspace.

    Args:
        types (str | Unset):
        document_id (UUID | Unset):
        last_event_id (str | Unset):
        workspace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        types=types,
        document_id=document_id,
        last_event_id=last_event_id,
        workspace=workspace,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    document_id: UUID | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
    workspace: str | Unset = UNSET,
) -> Problem | str | None:
    """Live stream of document events (Server-Sent Events)

     The events of the key's workspace as they are committed: `document.version.completed`,
    `document.version.failed`, `document.deleted`, `document.purged`, `source.sync.completed`,
    `source.sync.failed`. Reconnecting with `Last-Event-ID` resumes after that event, as far back as the
    log retains events (7 days by default); an event may come twice around a resume. A signed-in
    dashboard session (cookie) may name one of its account's workspaces in `workspace`, since a
    browser's `EventSource` cannot send `X-KB-Workspace`; an API key always streams its own workspace.

    Args:
        types (str | Unset):
        document_id (UUID | Unset):
        last_event_id (str | Unset):
        workspace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        client=client,
        types=types,
        document_id=document_id,
        last_event_id=last_event_id,
        workspace=workspace,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    document_id: UUID | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
    workspace: str | Unset = UNSET,
) -> Response[Problem | str]:
    """Live stream of document events (Server-Sent Events)

     The events of the key's workspace as they are committed: `document.version.completed`,
    `document.version.failed`, `document.deleted`, `document.purged`, `source.sync.completed`,
    `source.sync.failed`. Reconnecting with `Last-Event-ID` resumes after that event, as far back as the
    log retains events (7 days by default); an event may come twice around a resume. A signed-in
    dashboard session (cookie) may name one of its account's workspaces in `workspace`, since a
    browser's `EventSource` cannot send `X-KB-Workspace`; an API key always streams its own workspace.

    Args:
        types (str | Unset):
        document_id (UUID | Unset):
        last_event_id (str | Unset):
        workspace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        types=types,
        document_id=document_id,
        last_event_id=last_event_id,
        workspace=workspace,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    document_id: UUID | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
    workspace: str | Unset = UNSET,
) -> Problem | str | None:
    """Live stream of document events (Server-Sent Events)

     The events of the key's workspace as they are committed: `document.version.completed`,
    `document.version.failed`, `document.deleted`, `document.purged`, `source.sync.completed`,
    `source.sync.failed`. Reconnecting with `Last-Event-ID` resumes after that event, as far back as the
    log retains events (7 days by default); an event may come twice around a resume. A signed-in
    dashboard session (cookie) may name one of its account's workspaces in `workspace`, since a
    browser's `EventSource` cannot send `X-KB-Workspace`; an API key always streams its own workspace.

    Args:
        types (str | Unset):
        document_id (UUID | Unset):
        last_event_id (str | Unset):
        workspace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            client=client,
            types=types,
            document_id=document_id,
            last_event_id=last_event_id,
            workspace=workspace,
        )
    ).parsed
