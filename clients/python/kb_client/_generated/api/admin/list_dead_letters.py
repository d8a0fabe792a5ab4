from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.dead_letter_list import DeadLetterList
from ...models.list_dead_letters_stage import ListDeadLettersStage
from ...models.list_dead_letters_state import ListDeadLettersState
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    stage: ListDeadLettersStage | Unset = UNSET,
    state: ListDeadLettersState | Unset = ListDeadLettersState.ALL,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_stage: str | Unset = UNSET
    if not isinstance(stage, Unset):
        json_stage = stage.value

    params["stage"] = json_stage

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/admin/dead-letters",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeadLetterList | Problem | None:
    if response.status_code == 200:
        response_200 = DeadLetterList.from_dict(response.json())

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
) -> Response[DeadLetterList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    stage: ListDeadLettersStage | Unset = UNSET,
    state: ListDeadLettersState | Unset = ListDeadLettersState.ALL,
) -> Response[DeadLetterList | Problem]:
    """List dead letters

     Events of the workspace's documents that a pipeline stage gave up on (a file that can never be
    parsed, an event that cannot be handled), read from the stages' dead-letter topics, with whether
    each was replayed. An owner's dashboard session or a key with `write` permission.

    Args:
        stage (ListDeadLettersStage | Unset):
        state (ListDeadLettersState | Unset):  Default: ListDeadLettersState.ALL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterList | Problem]
    """

    kwargs = _get_kwargs(
        stage=stage,
        state=state,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    stage: ListDeadLettersStage | Unset = UNSET,
    state: ListDeadLettersState | Unset = ListDeadLettersState.ALL,
) -> DeadLetterList | Problem | None:
    """List dead letters

     Events of the workspace's documents that a pipeline stage gave up on (a file that can never be
    parsed, an event that cannot be handled), read from the stages' dead-letter topics, with whether
    each was replayed. An owner's dashboard session or a key with `write` permission.

    Args:
        stage (ListDeadLettersStage | Unset):
        state (ListDeadLettersState | Unset):  Default: ListDeadLettersState.ALL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterList | Problem
    """

    return sync_detailed(
        client=client,
        stage=stage,
        state=state,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    stage: ListDeadLettersStage | Unset = UNSET,
    state: ListDeadLettersState | Unset = ListDeadLettersState.ALL,
) -> Response[DeadLetterList | Problem]:
    """List dead letters

     Events of the workspace's documents that a pipeline stage gave up on (a file that can never be
    parsed, an event that cannot be handled), read from the stages' dead-letter topics, with whether
    each was replayed. An owner's dashboard session or a key with `write` permission.

    Args:
        stage (ListDeadLettersStage | Unset):
        state (ListDeadLettersState | Unset):  Default: ListDeadLettersState.ALL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterList | Problem]
    """

    kwargs = _get_kwargs(
        stage=stage,
        state=state,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    stage: ListDeadLettersStage | Unset = UNSET,
    state: ListDeadLettersState | Unset = ListDeadLettersState.ALL,
) -> DeadLetterList | Problem | None:
    """List dead letters

     Events of the workspace's documents that a pipeline stage gave up on (a file that can never be
    parsed, an event that cannot be handled), read from the stages' dead-letter topics, with whether
    each was replayed. An owner's dashboard session or a key with `write` permission.

    Args:
        stage (ListDeadLettersStage | Unset):
        state (ListDeadLettersState | Unset):  Default: ListDeadLettersState.ALL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterList | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            stage=stage,
            state=state,
        )
    ).parsed
