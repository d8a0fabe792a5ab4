import datetime
from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.audit_log import AuditLog
from ...models.list_audit_logs_action import ListAuditLogsAction
from ...models.list_audit_logs_order import ListAuditLogsOrder
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    document_id: UUID | Unset = UNSET,
    action: ListAuditLogsAction | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 20,
    order: ListAuditLogsOrder | Unset = ListAuditLogsOrder.ASC,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_document_id: str | Unset = UNSET
    if not isinstance(document_id, Unset):
        json_document_id = str(document_id)
    params["document_id"] = json_document_id

    json_action: str | Unset = UNSET
    if not isinstance(action, Unset):
        json_action = action.value

    params["action"] = json_action

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params["cursor"] = cursor

    params["limit"] = limit

    json_order: str | Unset = UNSET
    if not isinstance(order, Unset):
        json_order = order.value

    params["order"] = json_order

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/audit-logs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AuditLog | Problem | None:
    if response.status_code == 200:
        response_200 = AuditLog.from_dict(response.json())

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
) -> Response[AuditLog | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    document_id: UUID | Unset = UNSET,
    action: ListAuditLogsAction | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 20,
    order: ListAuditLogsOrder | Unset = ListAuditLogsOrder.ASC,
) -> Response[AuditLog | Problem]:
    """Audit log of the workspace

     Every create, update, rollback, delete and purge, oldest first (`order=desc`: newest first), with
    cursor paging.

    Args:
        document_id (UUID | Unset):
        action (ListAuditLogsAction | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):  Default: 20.
        order (ListAuditLogsOrder | Unset):  Default: ListAuditLogsOrder.ASC.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuditLog | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        action=action,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
        order=order,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    document_id: UUID | Unset = UNSET,
    action: ListAuditLogsAction | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 20,
    order: ListAuditLogsOrder | Unset = ListAuditLogsOrder.ASC,
) -> AuditLog | Problem | None:
    """Audit log of the workspace

     Every create, update, rollback, delete and purge, oldest first (`order=desc`: newest first), with
    cursor paging.

    Args:
        document_id (UUID | Unset):
        action (ListAuditLogsAction | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):  Default: 20.
        order (ListAuditLogsOrder | Unset):  Default: ListAuditLogsOrder.ASC.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuditLog | Problem
    """

    return sync_detailed(
        client=client,
        document_id=document_id,
        action=action,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
        order=order,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    document_id: UUID | Unset = UNSET,
    action: ListAuditLogsAction | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 20,
    order: ListAuditLogsOrder | Unset = ListAuditLogsOrder.ASC,
) -> Response[AuditLog | Problem]:
    """Audit log of the workspace

     Every create, update, rollback, delete and purge, oldest first (`order=desc`: newest first), with
    cursor paging.

    Args:
        document_id (UUID | Unset):
        action (ListAuditLogsAction | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):  Default: 20.
        order (ListAuditLogsOrder | Unset):  Default: ListAuditLogsOrder.ASC.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuditLog | Problem]
    """

    kwargs = _get_kwargs(
        document_id=document_id,
        action=action,
        since=since,
        until=until,
        cursor=cursor,
        limit=limit,
        order=order,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    document_id: UUID | Unset = UNSET,
    action: ListAuditLogsAction | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 20,
    order: ListAuditLogsOrder | Unset = ListAuditLogsOrder.ASC,
) -> AuditLog | Problem | None:
    """Audit log of the workspace

     Every create, update, rollback, delete and purge, oldest first (`order=desc`: newest first), with
    cursor paging.

    Args:
        document_id (UUID | Unset):
        action (ListAuditLogsAction | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):
        cursor (str | Unset):
        limit (int | Unset):  Default: 20.
        order (ListAuditLogsOrder | Unset):  Default: ListAuditLogsOrder.ASC.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuditLog | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            document_id=document_id,
            action=action,
            since=since,
            until=until,
            cursor=cursor,
            limit=limit,
            order=order,
        )
    ).parsed
