import { createHash } from 'node:crypto';
import { KbError } from '../../errors/kb-error.ts';
import { createEngineHttp, type EngineHttp, type SourceHit } from '../document-store/opensearch/opensearch-http.ts';
import type { ClaimOutcome, IdempotencyRecord, IdempotencyStore } from './idempotency-store.port.ts';

export interface OpenSearchIdempotencyStoreOptions {
  readonly url: string;
  /** The index is `<indexPrefix>-idempotency-keys`. */
  readonly indexPrefix: string;
  readonly requestTimeoutMs?: number;
}

/** The record itself is opaque; only its expiry is indexed (for the sweep). */
const MAPPINGS = {
  expires_at_ms: { type: 'long' },
  record: { type: 'object', enabled: false },
} as const;

interface KeyDoc {
  readonly expires_at_ms: number;
  readonly record: IdempotencyRecord;
}

interface Guarded {
  readonly record: IdempotencyRecord;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/** How many times a write that lost a race is tried again before giving up. */
const MAX_ATTEMPTS = 20;

/** One id per (scope, key), whatever characters they hold. */
const docId = (scope: string, key: string) =>
  createHash('sha256')
    .update(JSON.stringify([scope, key]))
    .digest('hex');

const body = (record: IdempotencyRecord): KeyDoc => ({ expires_at_ms: record.expiresAtMs, record });

/**
 * The idempotency store on OpenSearch, for the distributed runtime: one index, one record per
 * (scope, key), read by id (real time, no refresh needed). A claim creates the record with
 * `op_type=create` (exactly one of simultaneous creators succeeds; the others read the winner's
 * record); an expired record is replaced only with `if_seq_no`/`if_primary_term` of the version
 * read, so of simultaneous takers-over one wins. Completion and release are guarded the same way
 * and check the token first. A write the client sent again after a lost answer (its transport
 * retries) is recognised by the token it left. The sweep is a `_delete_by_query` on the expiry
 * with `conflicts=proceed`: a record changed since the sweep read it is kept.
 */
export async function createOpenSearchIdempotencyStore(
  options: OpenSearchIdempotencyStoreOptions,
): Promise<IdempotencyStore> {
  const http: EngineHttp = createEngineHttp({ url: options.url, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
  const index = `${options.indexPrefix}-idempotency-keys`;
  const docPath = (id: string) => `/${index}/_doc/${id}`;

  async function ensureIndex(): Promise<void> {
    const exists = await http.request('HEAD', `/${index}`, undefined, { allow: [404] });
    if (exists.status !== 404) return;
    const created = await http.request<{ error?: { type?: string } }>(
      'PUT',
      `/${index}`,
      { settings: { number_of_shards: 1 }, mappings: { dynamic: 'strict', properties: MAPPINGS } },
      { allow: [400] },
    );
    if (created.status === 400 && created.body.error?.type !== 'resource_already_exists_exception') {
      throw new KbError('config-invalid', `Cannot create index ${index}: ${JSON.stringify(created.body)}`);
    }
    await http.request('GET', `/_cluster/health/${index}`, undefined, {
      query: { wait_for_status: 'yellow', timeout: '30s' },
    });
  }

  async function get(id: string): Promise<Guarded | null> {
    const response = await http.request<SourceHit<KeyDoc>>('GET', docPath(id), undefined, { allow: [404] });
    const source = response.body._source;
    if (response.status === 404 || !source) return null;
    return { record: source.record, seqNo: response.body._seq_no ?? 0, primaryTerm: response.body._primary_term ?? 0 };
  }

  /** Writes `record` if the id is free (`create`) or unchanged since read (a guard); false when it was not. */
  async function put(id: string, record: IdempotencyRecord, condition: 'create' | Guarded): Promise<boolean> {
    const query: Record<string, string | number> =
      condition === 'create'
        ? { op_type: 'create' }
        : { if_seq_no: condition.seqNo, if_primary_term: condition.primaryTerm };
    const response = await http.request('PUT', docPath(id), body(record), { query, allow: [409] });
    return response.status !== 409;
  }

  try {
    await ensureIndex();
  } catch (error) {
    await http.close();
    throw error;
  }

  return {
    kind: 'opensearch',

    async claim(request): Promise<ClaimOutcome> {
      const id = docId(request.scope, request.key);
      const record: IdempotencyRecord = {
        scope: request.scope,
        key: request.key,
        fingerprint: request.fingerprint,
        token: request.token,
        state: 'in-progress',
        createdAtMs: request.nowMs,
        expiresAtMs: request.expiresAtMs,
        response: null,
      };
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (await put(id, record, 'create')) return { claimed: true, record };
        const current = await get(id);
        if (!current) continue;
        // This claim's own write, sent again by the transport after its answer was lost.
        if (current.record.token === request.token) return { claimed: true, record: current.record };
        if (current.record.expiresAtMs > request.nowMs) return { claimed: false, record: current.record };
        if (await put(id, record, current)) return { claimed: true, record };
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was claimed; try again.`);
    },

    async complete(scope, key, token, response, expiresAtMs) {
      const id = docId(scope, key);
      let wrote = false;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await get(id);
        if (!current || current.record.token !== token) return false;
        if (current.record.state === 'completed') return wrote;
        const completed: IdempotencyRecord = { ...current.record, state: 'completed', response, expiresAtMs };
        wrote = true;
        if (await put(id, completed, current)) return true;
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was completed; try again.`);
    },

    async release(scope, key, token) {
      const id = docId(scope, key);
      let wrote = false;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await get(id);
        if (!current) return wrote;
        if (current.record.token !== token || current.record.state !== 'in-progress') return false;
        wrote = true;
        const response = await http.request('DELETE', docPath(id), undefined, {
          query: { if_seq_no: current.seqNo, if_primary_term: current.primaryTerm },
          allow: [404, 409],
        });
        if (response.status !== 409) return true;
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was released; try again.`);
    },

    async lookup(scope, key, nowMs) {
      const current = await get(docId(scope, key));
      return current && current.record.expiresAtMs > nowMs ? current.record : null;
    },

    async sweep(nowMs) {
      await http.request('POST', `/${index}/_refresh`);
      const response = await http.request<{ deleted?: number }>(
        'POST',
        `/${index}/_delete_by_query`,
        { query: { range: { expires_at_ms: { lte: nowMs } } } },
        { query: { conflicts: 'proceed', refresh: 'true' } },
      );
      return response.body.deleted ?? 0;
    },

    async close() {
      await http.close();
    },
  };
}
