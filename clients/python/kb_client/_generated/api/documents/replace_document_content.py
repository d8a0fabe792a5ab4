from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.document import Document
from ...models.problem import Problem
from ...models.replace_form import ReplaceForm
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    body: ReplaceForm,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/api/v1/documents/{id}".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["files"] = body.to_multipart()

    headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Document | Problem | None:
    if response.status_code == 200:
        response_200 = Document.from_dict(response.json())

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
) -> Response[Document | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplaceForm,
    idempotency_key: str | Unset = UNSET,
) -> Response[Document | Problem]:
    """Replace the content (new version)

     multipart/form-data like the upload: the new file in `file`, optional `metadata` (replaces the
    metadata; omitted keeps it) and `change_reason` (a form field or a key of `metadata`). Creates
    version M+1, which is ingested again. Refused with 429 or 503 and `Retry-After` while the ingestion
    backlog is full, as the upload is.

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ReplaceForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Document | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplaceForm,
    idempotency_key: str | Unset = UNSET,
) -> Document | Problem | None:
    """Replace the content (new version)

     multipart/form-data like the upload: the new file in `file`, optional `metadata` (replaces the
    metadata; omitted keeps it) and `change_reason` (a form field or a key of `metadata`). Creates
    version M+1, which is ingested again. Refused with 429 or 503 and `Retry-After` while the ingestion
    backlog is full, as the upload is.

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ReplaceForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Document | Problem
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplaceForm,
    idempotency_key: str | Unset = UNSET,
) -> Response[Document | Problem]:
    """Replace the content (new version)

     multipart/form-data like the upload: the new file in `file`, optional `metadata` (replaces the
    metadata; omitted keeps it) and `change_reason` (a form field or a key of `metadata`). Creates
    version M+1, which is ingested again. Refused with 429 or 503 and `Retry-After` while the ingestion
    backlog is full, as the upload is.

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ReplaceForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Document | Problem]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReplaceForm,
    idempotency_key: str | Unset = UNSET,
) -> Document | Problem | None:
    """Replace the content (new version)

     multipart/form-data like the upload: the new file in `file`, optional `metadata` (replaces the
    metadata; omitted keeps it) and `change_reason` (a form field or a key of `metadata`). Creates
    version M+1, which is ingested again. Refused with 429 or 503 and `Retry-After` while the ingestion
    backlog is full, as the upload is.

    Args:
        id (str):
        idempotency_key (str | Unset):
        body (ReplaceForm): Unknown form fields are refused (422).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Document | Problem
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
