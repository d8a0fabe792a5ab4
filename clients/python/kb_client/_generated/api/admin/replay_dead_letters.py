from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.dead_letter_replay_request import DeadLetterReplayRequest
from ...models.dead_letter_replay_result import DeadLetterReplayResult
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: DeadLetterReplayRequest,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/admin/dead-letters/replay",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeadLetterReplayResult | Problem | None:
    if response.status_code == 200:
        response_200 = DeadLetterReplayResult.from_dict(response.json())

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
) -> Response[DeadLetterReplayResult | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterReplayRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[DeadLetterReplayResult | Problem]:
    """Replay dead letters

     Re-drives every dead letter of the workspace not replayed yet (of one stage with `stage`), once its
    cause is fixed: a failed version goes back to `processing` and the event back to its stage's input
    topic. Each dead letter is replayed once: a second replay finds nothing pending. A dead letter whose
    version completed meanwhile or is gone is recorded as `skipped`.

    Args:
        idempotency_key (str | Unset):
        body (DeadLetterReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterReplayResult | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterReplayRequest,
    idempotency_key: str | Unset = UNSET,
) -> DeadLetterReplayResult | Problem | None:
    """Replay dead letters

     Re-drives every dead letter of the workspace not replayed yet (of one stage with `stage`), once its
    cause is fixed: a failed version goes back to `processing` and the event back to its stage's input
    topic. Each dead letter is replayed once: a second replay finds nothing pending. A dead letter whose
    version completed meanwhile or is gone is recorded as `skipped`.

    Args:
        idempotency_key (str | Unset):
        body (DeadLetterReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterReplayResult | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterReplayRequest,
    idempotency_key: str | Unset = UNSET,
) -> Response[DeadLetterReplayResult | Problem]:
    """Replay dead letters

     Re-drives every dead letter of the workspace not replayed yet (of one stage with `stage`), once its
    cause is fixed: a failed version goes back to `processing` and the event back to its stage's input
    topic. Each dead letter is replayed once: a second replay finds nothing pending. A dead letter whose
    version completed meanwhile or is gone is recorded as `skipped`.

    Args:
        idempotency_key (str | Unset):
        body (DeadLetterReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterReplayResult | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterReplayRequest,
    idempotency_key: str | Unset = UNSET,
) -> DeadLetterReplayResult | Problem | None:
    """Replay dead letters

     Re-drives every dead letter of the workspace not replayed yet (of one stage with `stage`), once its
    cause is fixed: a failed version goes back to `processing` and the event back to its stage's input
    topic. Each dead letter is replayed once: a second replay finds nothing pending. A dead letter whose
    version completed meanwhile or is gone is recorded as `skipped`.

    Args:
        idempotency_key (str | Unset):
        body (DeadLetterReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterReplayResult | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
