from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.upload_form import UploadForm
from ...models.upload_result import UploadResult
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: UploadForm,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/documents",
    }

    _kwargs["files"] = body.to_multipart()

    headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | UploadResult | None:
    if response.status_code == 201:
        response_201 = UploadResult.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if response.status_code == 507:
        response_507 = Problem.from_dict(response.json())

        return response_507

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | UploadResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: UploadForm,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | UploadResult]:
    """Upload a document

     multipart/form-data with the file in `file` (up to 52428800 bytes) and optional `metadata` (a JSON
    object as a string), `source` (default `upload`), `source_item` (the item within the source, e.g. a
    relative path) and `change_reason`. The file is stored and queued for ingestion; poll the document
    until `status` is `completed`. While the workspace’s ingestion backlog is full the upload is refused
    with 429 (503 when the whole service’s is) and `Retry-After`: send it again then.

    Args:
        idempotency_key (str | Unset):
        body (UploadForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | UploadResult]
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
    body: UploadForm,
    idempotency_key: str | Unset = UNSET,
) -> Problem | UploadResult | None:
    """Upload a document

     multipart/form-data with the file in `file` (up to 52428800 bytes) and optional `metadata` (a JSON
    object as a string), `source` (default `upload`), `source_item` (the item within the source, e.g. a
    relative path) and `change_reason`. The file is stored and queued for ingestion; poll the document
    until `status` is `completed`. While the workspace’s ingestion backlog is full the upload is refused
    with 429 (503 when the whole service’s is) and `Retry-After`: send it again then.

    Args:
        idempotency_key (str | Unset):
        body (UploadForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | UploadResult
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: UploadForm,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | UploadResult]:
    """Upload a document

     multipart/form-data with the file in `file` (up to 52428800 bytes) and optional `metadata` (a JSON
    object as a string), `source` (default `upload`), `source_item` (the item within the source, e.g. a
    relative path) and `change_reason`. The file is stored and queued for ingestion; poll the document
    until `status` is `completed`. While the workspace’s ingestion backlog is full the upload is refused
    with 429 (503 when the whole service’s is) and `Retry-After`: send it again then.

    Args:
        idempotency_key (str | Unset):
        body (UploadForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | UploadResult]
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
    body: UploadForm,
    idempotency_key: str | Unset = UNSET,
) -> Problem | UploadResult | None:
    """Upload a document

     multipart/form-data with the file in `file` (up to 52428800 bytes) and optional `metadata` (a JSON
    object as a string), `source` (default `upload`), `source_item` (the item within the source, e.g. a
    relative path) and `change_reason`. The file is stored and queued for ingestion; poll the document
    until `status` is `completed`. While the workspace’s ingestion backlog is full the upload is refused
    with 429 (503 when the whole service’s is) and `Retry-After`: send it again then.

    Args:
        idempotency_key (str | Unset):
        body (UploadForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | UploadResult
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
