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

/** Claims of this process remembered with the version they wrote (beyond it, the oldest are forgotten). */
const MAX_REMEMBERED_CLAIMS = 10_000;

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
 * read, so of simultaneous takers-over one wins. Completion and release (which keeps the record,
 * lapsed) are guarded the same way and check the token first; of a claim this process made they
 * are one write, guarded by the version its claim wrote (read again only when that guard fails). A write the client sent again after a lost answer (its transport
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

  /**
   * The claims this process made, with the version its write left, so that completing or releasing
   * one is a single guarded write (a read first only when the guard fails).
   */
  const claims = new Map<string, Guarded>();
  const remember = (id: string, claimed: Guarded) => {
    claims.delete(id);
    claims.set(id, claimed);
    if (claims.size > MAX_REMEMBERED_CLAIMS) claims.delete(claims.keys().next().value as string);
  };

  /**
   * Writes `record` if the id is free (`create`) or unchanged since read (a guard); the version it
   * wrote, or null when it was not free or changed.
   */
  async function put(id: string, record: IdempotencyRecord, condition: 'create' | Guarded): Promise<Guarded | null> {
    const query: Record<string, string | number> =
      condition === 'create'
        ? { op_type: 'create' }
        : { if_seq_no: condition.seqNo, if_primary_term: condition.primaryTerm };
    const response = await http.request<{ _seq_no?: number; _primary_term?: number }>(
      'PUT',
      docPath(id),
      body(record),
      { query, allow: [409] },
    );
    if (response.status === 409) return null;
    return { record, seqNo: response.body._seq_no ?? 0, primaryTerm: response.body._primary_term ?? 0 };
  }

  /** The record as this process's claim left it (no read), or else as read now. */
  async function current(id: string, token: string): Promise<Guarded | null> {
    const mine = claims.get(id);
    if (mine?.record.token !== token) return get(id);
    claims.delete(id);
    return mine;
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
      /**
       * The record the last takeover tried to replace: when this claim's own record is found after
       * a lost answer, that takeover is what wrote it (or a create, when there was none).
       */
      let tried: IdempotencyRecord | null = null;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const created = await put(id, record, 'create');
        if (created) {
          remember(id, created);
          return { claimed: true, record, replaced: null };
        }
        const found = await get(id);
        if (!found) continue;
        // This claim's own write, sent again by the transport after its answer was lost.
        if (found.record.token === request.token) return { claimed: true, record: found.record, replaced: tried };
        if (found.record.expiresAtMs > request.nowMs) return { claimed: false, record: found.record };
        tried = found.record;
        const taken = await put(id, record, found);
        if (taken) {
          remember(id, taken);
          return { claimed: true, record, replaced: found.record };
        }
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was claimed; try again.`);
    },

    async complete(scope, key, token, response, expiresAtMs) {
      const id = docId(scope, key);
      let wrote = false;
      let found = await current(id, token);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (!found || found.record.token !== token) return false;
        if (found.record.state === 'completed') return wrote;
        const completed: IdempotencyRecord = { ...found.record, state: 'completed', response, expiresAtMs };
        wrote = true;
        if (await put(id, completed, found)) return true;
        found = await get(id);
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was completed; try again.`);
    },

    async release(scope, key, token, nowMs) {
      const id = docId(scope, key);
      let wrote = false;
      let found = await current(id, token);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (!found) return wrote;
        if (found.record.token !== token || found.record.state !== 'in-progress') return false;
        // Lapsed already: by this call's own write (sent again after a lost answer), or before it.
        if (found.record.expiresAtMs <= nowMs) return wrote;
        wrote = true;
        if (await put(id, { ...found.record, expiresAtMs: nowMs }, found)) return true;
        found = await get(id);
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was released; try again.`);
    },

    async renew(scope, key, token, nowMs, expiresAtMs) {
      const id = docId(scope, key);
      let found = await current(id, token);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        if (!found || found.record.token !== token || found.record.state !== 'in-progress') return false;
        // This call's own write, sent again after a lost answer.
        if (found.record.expiresAtMs === expiresAtMs) return true;
        if (found.record.expiresAtMs <= nowMs) return false;
        const renewed = await put(id, { ...found.record, expiresAtMs }, found);
        if (renewed) {
          remember(id, renewed);
          return true;
        }
        found = await get(id);
      }
      throw new KbError('conflict', `The idempotency key kept changing while it was renewed; try again.`);
    },

    async lookup(scope, key, nowMs) {
      const found = await get(docId(scope, key));
      return found && found.record.expiresAtMs > nowMs ? found.record : null;
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
