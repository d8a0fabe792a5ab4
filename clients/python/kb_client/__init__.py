"""The knowledge-base document service's Python client.

``KbClient.api`` is the generated part (``kb_client._generated``, by openapi-python-client from the
service's OpenAPI document): every operation in ``kb_client._generated.api`` and every schema in
``kb_client._generated.models``. Around it, only what generation cannot give: a multipart upload with
metadata, waiting until a version is ingested, iterating over every page of a list, a fresh
``Idempotency-Key`` on every write (so a write retried after a lost answer is applied once), and
retrying a request answered 429 or 503 after its ``Retry-After``.
"""

from __future__ import annotations

import email.utils
import json
import mimetypes
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO, TypeVar

import httpx

from ._generated import AuthenticatedClient
from ._generated.api.documents import get_document, list_documents, lookup_documents
from ._generated.api.search import search as search_operation
from ._generated.api.tokens import create_token as create_token_operation
from ._generated.api.versions import compare_versions, list_versions, rollback_document
from ._generated.models import (
    Document,
    DocumentList,
    DocumentListItem,
    DocumentLookup,
    DocumentLookupMatch,
    DocumentLookupResult,
    Problem,
    RollbackRequest,
    RollbackResult,
    ScopedToken,
    SearchRequest,
    SourceItemKey,
    SearchResponse,
    TokenRequest,
    UploadResult,
    VersionComparison,
    VersionList,
    VersionStatus,
)
from ._generated.types import UNSET, Response

__all__ = [
    "Document",
    "DocumentListItem",
    "DocumentLookupMatch",
    "KbApiError",
    "KbClient",
    "RetryOn429Transport",
    "RollbackResult",
    "ScopedToken",
    "SearchResponse",
    "UploadResult",
    "VersionComparison",
    "VersionList",
]

T = TypeVar("T")


class KbApiError(Exception):
    """An answer of the service that is not a success: its status and RFC 7807 problem (when it sent one)."""

    def __init__(self, status: int, problem: Problem | None, body: bytes = b""):
        self.status = status
        self.problem = problem
        text = f"{problem.title}: {problem.detail}" if problem else body.decode(errors="replace")[:500]
        super().__init__(f"{status} {text}")


def retry_after_seconds(header: str | None, now: float | None = None) -> float:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date); 1 when absent or unreadable."""
    if header is None:
        return 1.0
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return 1.0
    return max(0.0, at - (time.time() if now is None else now))


_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Requests sent as POST that only read: they take no Idempotency-Key.
_READS_BY_POST = re.compile(r"/(search|documents/lookup)$")
_RETRIED_STATUSES = frozenset({429, 503})


class RetryOn429Transport(httpx.BaseTransport):
    """Sends a request answered 429 or 503 again after its ``Retry-After``, up to ``max_retries`` times.

    With ``idempotency_keys`` (the default), a write (POST, PUT, PATCH, DELETE; not search or lookup)
    without an ``Idempotency-Key`` header gets a fresh random one first, which every retry repeats:
    a write whose answer was lost and that is sent again is applied once.
    """

    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        max_retries: int = 5,
        max_wait: float = 60.0,
        *,
        idempotency_keys: bool = True,
    ):
        self._inner = inner or httpx.HTTPTransport()
        self._max_retries = max_retries
        self._max_wait = max_wait
        self._idempotency_keys = idempotency_keys

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()  # the body in memory, so it can be sent again
        if (
            self._idempotency_keys
            and request.method in _WRITE_METHODS
            and "idempotency-key" not in request.headers
            and not _READS_BY_POST.search(request.url.path)
        ):
            request.headers["Idempotency-Key"] = str(uuid.uuid4())
        attempt = 0
        while True:
            response = self._inner.handle_request(request)
            if response.status_code not in _RETRIED_STATUSES or attempt >= self._max_retries:
                return response
            wait = min(retry_after_seconds(response.headers.get("retry-after")), self._max_wait)
            response.close()
            time.sleep(wait)
            attempt += 1

    def close(self) -> None:
        self._inner.close()


def _ok(response: Response[Any], expected: type[T]) -> T:
    if isinstance(response.parsed, expected):
        return response.parsed
    problem = response.parsed if isinstance(response.parsed, Problem) else None
    raise KbApiError(int(response.status_code), problem, response.content)


class KbClient:
    """A client of one service, as one API key.

    ``base_url`` is the service's address (``http://127.0.0.1:8080``), ``api_key`` a key (``ink_…``)
    or a scoped token (from ``create_token``), sent as ``Authorization: Bearer``. A request answered
    429 or 503 is retried ``max_retries`` times, each after its ``Retry-After`` (at most
    ``max_retry_wait`` seconds). Every write carries a fresh random ``Idempotency-Key`` unless the
    call passes one (``idempotency_key=``) or the client was made with ``idempotency_keys=False``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        max_retries: int = 5,
        max_retry_wait: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        idempotency_keys: bool = True,
    ):
        retrying = RetryOn429Transport(transport, max_retries, max_retry_wait, idempotency_keys=idempotency_keys)
        self.api = AuthenticatedClient(
            base_url=base_url.rstrip("/"),
            token=api_key,
            timeout=httpx.Timeout(timeout),
            httpx_args={"transport": retrying},
        )

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> KbClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- uploads (multipart with metadata) --

    def _form(
        self,
        file: bytes | BinaryIO,
        name: str,
        metadata: Mapping[str, Any] | None,
        source: str | None,
        change_reason: str | None,
        mime_type: str | None,
        source_item: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        content_type = mime_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        data: dict[str, str] = {}
        if metadata is not None:
            data["metadata"] = json.dumps(dict(metadata))
        if source is not None:
            data["source"] = source
        if source_item is not None:
            data["source_item"] = source_item
        if change_reason is not None:
            data["change_reason"] = change_reason
        form: dict[str, Any] = {"files": {"file": (name, file, content_type)}, "data": data}
        if idempotency_key is not None:
            form["headers"] = {"Idempotency-Key": idempotency_key}
        return form

    def _send(self, method: str, url: str, form: dict[str, Any], status: int, model: Any) -> Any:
        response = self.api.get_httpx_client().request(method, url, **form)
        if response.status_code == status:
            return model.from_dict(response.json())
        problem = None
        if response.headers.get("content-type", "").startswith("application/problem+json"):
            problem = Problem.from_dict(response.json())
        raise KbApiError(response.status_code, problem, response.content)

    def upload(
        self,
        file: bytes | BinaryIO,
        name: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        source_item: str | None = None,
        change_reason: str | None = None,
        mime_type: str | None = None,
        idempotency_key: str | None = None,
    ) -> UploadResult:
        """Uploads a file with its metadata: version 1 of a new document, ``pending``.

        ``source_item`` is the item within ``source`` (a relative path, an object key) that ``lookup``
        finds it by; ``idempotency_key`` replaces the fresh random key the client would send.
        """
        form = self._form(file, name, metadata, source, change_reason, mime_type, source_item, idempotency_key)
        return self._send("POST", "/api/v1/documents", form, 201, UploadResult)

    def replace(
        self,
        document_id: str,
        file: bytes | BinaryIO,
        name: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        change_reason: str | None = None,
        mime_type: str | None = None,
        idempotency_key: str | None = None,
    ) -> Document:
        """New content for a document: its next version, ingested again."""
        form = self._form(file, name, metadata, None, change_reason, mime_type, None, idempotency_key)
        return self._send("PUT", f"/api/v1/documents/{document_id}", form, 200, Document)

    # -- reads --

    def get_document(self, document_id: str) -> Document:
        return _ok(get_document.sync_detailed(document_id, client=self.api), Document)

    def wait_for(
        self, document_id: str, *, version: int | None = None, timeout: float = 120.0, interval: float = 0.5
    ) -> Document:
        """Polls the document until ``version`` (default: the latest now) is ``completed``.

        Raises ``RuntimeError`` when that version failed or is still not completed after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            doc = self.get_document(document_id)
            if version is None:
                version = doc.version
            if doc.version >= version and doc.status == VersionStatus.COMPLETED:
                return doc
            if doc.version == version and doc.status == VersionStatus.FAILED:
                reason = doc.error.message if doc.error else "no reason given"
                raise RuntimeError(f"Version {version} of {document_id} failed: {reason}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Version {version} of {document_id} is still {doc.status.value} after {timeout} s.")
            time.sleep(interval)

    def iter_documents(
        self, *, status: str | None = None, source: str | None = None, limit: int = 100
    ) -> Iterator[DocumentListItem]:
        """Every document of the workspace, newest first, page after page."""
        cursor: str | None = None
        while True:
            page = _ok(
                list_documents.sync_detailed(
                    client=self.api,
                    limit=limit,
                    cursor=cursor if cursor is not None else UNSET,
                    status=VersionStatus(status) if status is not None else UNSET,
                    source=source if source is not None else UNSET,
                ),
                DocumentList,
            )
            yield from page.documents
            if not page.pagination.has_more or not page.pagination.next_cursor:
                return
            cursor = page.pagination.next_cursor

    def lookup(self, items: list[tuple[str, str]]) -> list[DocumentLookupMatch]:
        """The documents uploaded with these ``(source, source_item)`` pairs (at most 1000 a call), each
        with its latest version and content hash: what a bulk loader needs to skip unchanged files."""
        body = DocumentLookup(items=[SourceItemKey(source=source, source_item=item) for source, item in items])
        return _ok(lookup_documents.sync_detailed(client=self.api, body=body), DocumentLookupResult).documents

    def search(self, query: str, **options: Any) -> SearchResponse:
        """Searches the workspace; ``options`` are the other members of the request (``mode``, ``limit``,
        ``filters``, ``as_of``, ``min_score``, ``weights``, ``group_by``) as the API names them."""
        body = SearchRequest.from_dict({"query": query, **options})
        return _ok(search_operation.sync_detailed(client=self.api, body=body), SearchResponse)

    # -- versions --

    def versions(self, document_id: str) -> VersionList:
        return _ok(list_versions.sync_detailed(document_id, client=self.api), VersionList)

    def compare_versions(self, document_id: str, from_version: int, to_version: int) -> VersionComparison:
        response = compare_versions.sync_detailed(document_id, client=self.api, from_=from_version, to=to_version)
        return _ok(response, VersionComparison)

    def rollback(self, document_id: str, target_version: int) -> RollbackResult:
        body = RollbackRequest(target_version=target_version)
        return _ok(rollback_document.sync_detailed(document_id, client=self.api, body=body), RollbackResult)

    # -- scoped tokens --

    def create_token(self, expires_in: int, **rules: Any) -> ScopedToken:
        """Mints a short-lived scoped token for an end user: it reads and searches only what its rules let
        through. ``rules`` are the other members of the request (``permissions``, ``filters``,
        ``sources``) as the API names them; hand ``.token`` to the end user's client."""
        body = TokenRequest.from_dict({"expires_in": expires_in, **rules})
        return _ok(create_token_operation.sync_detailed(client=self.api, body=body), ScopedToken)
