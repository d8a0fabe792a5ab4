import { Client, errors } from '@opensearch-project/opensearch';
import { KbError } from '../../../errors/kb-error.ts';
import { countEngineRequest } from '../../../util/engine-requests.ts';

/** A JSON body as sent to OpenSearch. */
export type Json = Record<string, unknown>;

/** How a write waits for search visibility: `true` refreshes at once, `wait_for` waits for the next refresh. */
export type RefreshPolicy = true | 'wait_for';

export interface RequestOptions {
  readonly query?: Record<string, string | number | boolean>;
  /** Statuses answered as a response instead of thrown (e.g. 404 for a lookup, 409 for a guarded write). */
  readonly allow?: readonly number[];
}

/** The status and body of an OpenSearch answer. */
export interface EngineResponse<T> {
  readonly status: number;
  readonly body: T;
}

/** `_source` of a hit or a get, with the metadata the adapter reads. */
export interface SourceHit<S> {
  readonly _id: string;
  readonly _score?: number | null;
  readonly _source?: S;
  readonly _seq_no?: number;
  readonly _primary_term?: number;
  readonly sort?: readonly unknown[];
  readonly found?: boolean;
  /** An `_mget` entry that could not be read (its shard unavailable, say): neither found nor absent. */
  readonly error?: { readonly type?: string; readonly reason?: string };
}

export interface SearchBody<S> {
  readonly hits: { readonly total?: { readonly value: number }; readonly hits: readonly SourceHit<S>[] };
  readonly aggregations?: Record<string, unknown>;
}

export interface CountBody {
  readonly count: number;
}

/** One bulk action: the action line and, except for delete, its body line. */
export type BulkAction =
  | {
      readonly kind: 'index';
      readonly index: string;
      readonly id: string;
      readonly source: Json;
      /** Only if the id is free (a `create` action); 409 otherwise. */
      readonly create?: boolean;
      /** Only if the record is unchanged since it was read with this guard; 409 otherwise. */
      readonly guard?: { readonly seqNo: number; readonly primaryTerm: number };
    }
  | {
      readonly kind: 'update';
      readonly index: string;
      readonly id: string;
      readonly body: Json;
      /** The engine's own retries of a conflicting update (default 5). */
      readonly retryOnConflict?: number;
      /** Answer the record as updated (`source` of the result). */
      readonly withSource?: boolean;
    }
  | { readonly kind: 'delete'; readonly index: string; readonly id: string };

export interface BulkItemResult {
  readonly id: string;
  readonly status: number;
  readonly errorType: string | null;
  readonly reason: string | null;
  /** The guard of the record as written (index and update actions that succeeded). */
  readonly seqNo?: number;
  readonly primaryTerm?: number;
  /** The record as updated, for an update action with `withSource`. */
  readonly source?: unknown;
}

/** Most actions sent in one `_bulk` request (chunks with vectors are a few KB each). */
const BULK_BATCH = 500;

/** Statuses that mean "the cluster is overloaded or not ready": retrying later may succeed. */
const BUSY_STATUSES = new Set([429, 502, 503, 504]);

interface ErrorBody {
  readonly error?: { readonly type?: string; readonly reason?: string } | string;
}

function errorSummary(body: unknown): string {
  const error = (body as ErrorBody | null)?.error;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') return [error.type, error.reason].filter(Boolean).join(': ');
  return 'no error details';
}

/**
 * A thin, typed layer over the OpenSearch client's transport (connection pool, dead-node retries):
 * every request goes through {@link EngineHttp.request}, which turns unreachable nodes and busy
 * answers into retriable `engine-unavailable` errors and any other unexpected status into
 * `internal-error`. Response bodies are typed by the caller.
 */
export interface EngineHttp {
  request<T>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<EngineResponse<T>>;
  /** Sends the actions in batches; returns one result per action, in order. Throws only for transport errors. */
  bulk(actions: readonly BulkAction[], refresh: RefreshPolicy | false): Promise<BulkItemResult[]>;
  /** Requests that may have written (anything but a lookup, search, count or stats), counted once answered. */
  readonly writes: number;
  close(): Promise<void>;
}

/** Endpoints that only read, whatever the method (`POST /_search` is a read). */
const READ_ENDPOINT = /\/(_search|_count|_mget|_stats|_mapping|_settings|_cluster\/health)(\/|\?|$)/;

/** The endpoint a request calls, as counted: its first `_` segment (`_mget`, `_doc`, `_refresh`), else the method on an index. */
export function endpointOf(method: string, path: string): string {
  const segment = path.split(/[/?]/).find((part) => part.startsWith('_'));
  return segment ?? `${method} index`;
}

function isWrite(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
  return !(READ_ENDPOINT.test(path) && method !== 'PUT');
}

export function createEngineHttp(options: { url: string; requestTimeoutMs: number }): EngineHttp {
  const client = new Client({ node: options.url, maxRetries: 2, requestTimeout: options.requestTimeoutMs });
  let writes = 0;

  function unavailable(error: unknown, what: string): KbError {
    const message = error instanceof Error ? error.message : String(error);
    return new KbError('engine-unavailable', `OpenSearch is unavailable (${what}): ${message}`, {
      cause: error,
      retriable: true,
    });
  }

  async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    requestOptions: RequestOptions = {},
  ): Promise<EngineResponse<T>> {
    const what = `${method} ${path}`;
    let response: { statusCode: number | null; body: unknown };
    const writing = isWrite(method, path);
    countEngineRequest('opensearch', endpointOf(method, path));
    try {
      response = await client.transport.request(
        {
          method,
          path,
          ...(body === undefined ? {} : { body: body as Json }),
          ...(requestOptions.query === undefined ? {} : { querystring: requestOptions.query }),
        },
        { ignore: [...(requestOptions.allow ?? [])] },
      );
    } catch (error) {
      if (
        error instanceof errors.ConnectionError ||
        error instanceof errors.TimeoutError ||
        error instanceof errors.NoLivingConnectionsError
      ) {
        throw unavailable(error, what);
      }
      if (error instanceof errors.ResponseError) {
        if (BUSY_STATUSES.has(error.statusCode)) throw unavailable(error, what);
        throw new KbError(
          'internal-error',
          `OpenSearch ${what} failed with ${error.statusCode}: ${errorSummary(error.body)}`,
          { cause: error },
        );
      }
      throw error;
    } finally {
      if (writing) writes += 1;
    }
    return { status: response.statusCode ?? 0, body: response.body as T };
  }

  async function bulk(actions: readonly BulkAction[], refresh: RefreshPolicy | false): Promise<BulkItemResult[]> {
    const results: BulkItemResult[] = [];
    for (let start = 0; start < actions.length; start += BULK_BATCH) {
      const batch = actions.slice(start, start + BULK_BATCH);
      const lines: Json[] = [];
      for (const action of batch) {
        const meta = { _index: action.index, _id: action.id };
        if (action.kind === 'index') {
          const guard =
            action.guard === undefined
              ? {}
              : { if_seq_no: action.guard.seqNo, if_primary_term: action.guard.primaryTerm };
          lines.push(action.create === true ? { create: meta } : { index: { ...meta, ...guard } }, action.source);
        } else if (action.kind === 'update') {
          lines.push(
            { update: { ...meta, retry_on_conflict: action.retryOnConflict ?? 5 } },
            action.withSource === true ? { ...action.body, _source: true } : action.body,
          );
        } else lines.push({ delete: meta });
      }
      const last = start + BULK_BATCH >= actions.length;
      const what = `POST /_bulk (${batch.length} actions)`;
      let response: { body: unknown };
      countEngineRequest('opensearch', '_bulk');
      try {
        response = await client.transport.request({
          method: 'POST',
          path: '/_bulk',
          bulkBody: lines,
          ...(last && refresh !== false ? { querystring: { refresh: String(refresh) } } : {}),
        });
      } catch (error) {
        if (error instanceof errors.ResponseError && !BUSY_STATUSES.has(error.statusCode)) {
          throw new KbError('internal-error', `OpenSearch ${what} failed with ${error.statusCode}`, { cause: error });
        }
        throw unavailable(error, what);
      } finally {
        writes += 1;
      }
      const items = (response.body as { items: Record<string, BulkItemBody>[] }).items;
      for (const item of items) {
        const result = Object.values(item)[0];
        if (result === undefined) continue;
        results.push({
          id: result._id,
          status: result.status,
          errorType: result.error?.type ?? null,
          reason: result.error?.reason ?? null,
          ...(result._seq_no === undefined ? {} : { seqNo: result._seq_no, primaryTerm: result._primary_term ?? 0 }),
          ...(result.get?._source === undefined ? {} : { source: result.get._source }),
        });
      }
    }
    return results;
  }

  return {
    request,
    bulk,
    get writes() {
      return writes;
    },
    async close() {
      await client.close();
    },
  };
}

interface BulkItemBody {
  readonly _id: string;
  readonly status: number;
  readonly _seq_no?: number;
  readonly _primary_term?: number;
  readonly get?: { readonly _source?: unknown };
  readonly error?: { readonly type?: string; readonly reason?: string };
}

/**
 * Throws for the first failed bulk item whose status is not in `tolerated`: busy statuses
 * (429 and 5xx answers of overloaded nodes) as retriable `engine-unavailable`, others as
 * `internal-error`.
 */
export function bulkItemError(result: BulkItemResult, what: string): KbError {
  const detail = `${what}: ${result.id} failed with ${result.status} (${result.errorType}: ${result.reason})`;
  if (BUSY_STATUSES.has(result.status)) {
    return new KbError('engine-unavailable', `OpenSearch is busy, ${detail}`, { retriable: true });
  }
  return new KbError('internal-error', `OpenSearch ${detail}`);
}

export function requireBulkSuccess(
  results: readonly BulkItemResult[],
  what: string,
  tolerated: readonly number[] = [],
) {
  for (const result of results) {
    if (result.status < 300 || tolerated.includes(result.status)) continue;
    throw bulkItemError(result, what);
  }
}
