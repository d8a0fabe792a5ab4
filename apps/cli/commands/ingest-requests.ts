/**
 * The requests `kb ingest` makes: looking documents up by source item, uploading a new document
 * and uploading a new version, each with an `Idempotency-Key` derived from what it writes, retried
 * on network errors and on 429/503 (after `Retry-After`) a bounded number of times.
 */
import { createHash } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { sleep } from '../../../core/util/time.ts';
import { networkProblem } from './service-client.ts';

export interface IngestTarget {
  readonly base: string;
  readonly key: string;
  readonly metadata: string | undefined;
}

/** Attempts of one request in all (the first and its retries). */
const MAX_ATTEMPTS = 10;
/** Longest wait honoured from a `Retry-After`, and the wait when it is absent or unreadable. */
const MAX_RETRY_AFTER_MS = 60_000;
const DEFAULT_RETRY_AFTER_MS = 1000;

/** The wait a `Retry-After` asks for (seconds or an HTTP date), bounded. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header === null || header.trim() === '') return DEFAULT_RETRY_AFTER_MS;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (Number.isNaN(ms)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** A request's answer, or why none came. */
export type Answer =
  | { readonly response: Response; readonly attempts: number }
  | { readonly unreachable: string; readonly attempts: number };

/**
 * Sends the request `init()` builds (a fresh body each attempt) until it is answered with
 * anything but 429/503 or the 409 of an Idempotency-Key still in use, at most {@link MAX_ATTEMPTS}
 * times: after `Retry-After` on those statuses, after a growing pause on a network error.
 */
export async function sendWithRetry(url: string, init: () => Promise<RequestInit>): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, await init());
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) return { unreachable: networkProblem(error), attempts: attempt };
      await sleep(Math.min(500 * attempt, 5000));
      continue;
    }
    const busy =
      response.status === 429 ||
      response.status === 503 ||
      (response.status === 409 && response.headers.has('retry-after'));
    if (busy && attempt < MAX_ATTEMPTS) {
      await response.body?.cancel();
      await sleep(retryAfterMs(response.headers.get('retry-after')));
      continue;
    }
    return { response, attempts: attempt };
  }
}

/** Hex SHA-256 of the parts joined by NUL: the stable part of an Idempotency-Key. */
function keyOf(...parts: ReadonlyArray<string | number>): string {
  return `kb-ingest-${createHash('sha256').update(parts.join('\0')).digest('hex')}`;
}

/** The Idempotency-Key of creating the document of (source, item) with this content. */
export const createKey = (source: string, item: string, contentHash: string, after?: string): string =>
  after === undefined ? keyOf('create', source, item, contentHash) : keyOf('create', source, item, contentHash, after);

/** The Idempotency-Key of putting this content on a document whose latest version is `baseVersion`. */
export const updateKey = (documentId: string, baseVersion: number, contentHash: string): string =>
  keyOf('update', documentId, baseVersion, contentHash);

/** A document the lookup found: its id, latest version and that version's content hash. */
export interface Known {
  readonly documentId: string;
  readonly version: number;
  readonly contentHash: string;
}

export type LookupResult =
  | { readonly found: Map<string, Known> }
  | { readonly refused: string; readonly status: number }
  | { readonly failed: string };

/** Key of a (source, item) pair in the lookup's map. */
export const pairKey = (source: string, item: string): string => JSON.stringify([source, item]);

/**
 * `POST /documents/lookup` for up to 1000 pairs: the oldest live document of each pair found.
 * `refused` on 401/403/404 (no key, no read permission, a service without the endpoint).
 */
export async function lookup(
  target: IngestTarget,
  pairs: ReadonlyArray<{ source: string; item: string }>,
): Promise<LookupResult> {
  const body = JSON.stringify({ items: pairs.map((p) => ({ source: p.source, source_item: p.item })) });
  const answer = await sendWithRetry(`${target.base}/api/v1/documents/lookup`, async () => ({
    method: 'POST',
    headers: { 'X-API-Key': target.key, 'content-type': 'application/json' },
    body,
  }));
  if ('unreachable' in answer) return { failed: `the service did not answer (${answer.unreachable})` };
  const { response } = answer;
  const json = (await response.json().catch(() => ({}))) as {
    documents?: Array<{
      source: string;
      source_item: string;
      document_id: string;
      version: number;
      content_hash: string;
    }>;
    detail?: string;
  };
  if (response.status === 401 || response.status === 403 || response.status === 404) {
    return { refused: `${response.status} ${json.detail ?? ''}`.trim(), status: response.status };
  }
  if (response.status !== 200 || !Array.isArray(json.documents)) {
    return { failed: `${response.status} ${json.detail ?? ''}`.trim() };
  }
  const found = new Map<string, Known>();
  for (const d of json.documents) {
    const key = pairKey(d.source, d.source_item);
    // Ordered oldest first: the first document of a pair is the one its files update.
    if (!found.has(key)) found.set(key, { documentId: d.document_id, version: d.version, contentHash: d.content_hash });
  }
  return { found };
}

export type WriteOutcome =
  | { readonly documentId: string; readonly version: number; readonly replayed: boolean; readonly attempts: number }
  | { readonly reason: string; readonly keyRefused: boolean; readonly status: number | null };

/** One multipart write (`POST /documents` or `PUT /documents/:id`) with its Idempotency-Key. */
async function writeForm(
  target: IngestTarget,
  method: 'POST' | 'PUT',
  url: string,
  file: { path: string; name: string },
  fields: Record<string, string>,
  idempotencyKey: string,
): Promise<WriteOutcome> {
  const answer = await sendWithRetry(url, async () => {
    const form = new FormData();
    if (target.metadata) form.append('metadata', target.metadata);
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', await openAsBlob(file.path), file.name);
    return { method, headers: { 'X-API-Key': target.key, 'Idempotency-Key': idempotencyKey }, body: form };
  });
  if ('unreachable' in answer) {
    return { reason: `the service did not answer (${answer.unreachable})`, keyRefused: false, status: null };
  }
  const { response } = answer;
  const body = (await response.json().catch(() => ({}))) as { document_id?: string; version?: number; detail?: string };
  const expected = method === 'POST' ? 201 : 200;
  if (response.status === expected && body.document_id) {
    return {
      documentId: body.document_id,
      version: body.version ?? 1,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      attempts: answer.attempts,
    };
  }
  return {
    reason: `${response.status} ${body.detail ?? ''}`.trim(),
    keyRefused: response.status === 401 || response.status === 403,
    status: response.status,
  };
}

/** Uploads a new document of (source, item). */
export function createDocument(
  target: IngestTarget,
  file: { path: string; source: string; item: string },
  idempotencyKey: string,
): Promise<WriteOutcome> {
  return writeForm(
    target,
    'POST',
    `${target.base}/api/v1/documents`,
    { path: file.path, name: file.item },
    { source: file.source, source_item: file.item },
    idempotencyKey,
  );
}

/** Uploads the file as a new version of `documentId` (`change_reason` "re-ingested"). */
export function replaceDocument(
  target: IngestTarget,
  file: { path: string; item: string },
  documentId: string,
  idempotencyKey: string,
): Promise<WriteOutcome> {
  return writeForm(
    target,
    'PUT',
    `${target.base}/api/v1/documents/${documentId}`,
    { path: file.path, name: file.item },
    { change_reason: 're-ingested' },
    idempotencyKey,
  );
}

/** Whether the document exists (for a create answered from an earlier run's key: was it deleted since?). */
export async function documentExists(target: IngestTarget, documentId: string): Promise<boolean> {
  const answer = await sendWithRetry(`${target.base}/api/v1/documents/${documentId}`, async () => ({
    headers: { 'X-API-Key': target.key },
  }));
  if ('unreachable' in answer) return true;
  await answer.response.body?.cancel();
  return answer.response.status !== 404;
}
