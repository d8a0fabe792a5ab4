import { KbError } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import { createCoalescedCalls } from '../../../util/coalesced-calls.ts';
import { backoffDelay, sleep } from '../../../util/time.ts';
import { requireIndexModel } from '../stored-records.ts';
import {
  type BulkAction,
  type BulkItemResult,
  bulkItemError,
  type CountBody,
  createEngineHttp,
  type Json,
  type RefreshPolicy,
  requireBulkSuccess,
  requireLookupAnswer,
  type SearchBody,
  type SourceHit,
} from './opensearch-http.ts';
import {
  indexDefinitions,
  indexNames,
  VECTOR_FIELD_PREFIX,
  vectorField,
  vectorFieldMapping,
} from './opensearch-mappings.ts';
import { chunkId, type DocumentSource, type VersionSource, versionId } from './opensearch-records.ts';
import { createSharedRefresh } from './opensearch-refresh.ts';

export interface OpenSearchDocumentStoreOptions {
  /** Base URL of the cluster, e.g. `http://127.0.0.1:9200`. */
  readonly url: string;
  /** Prefix of the six index names (`<prefix>-documents`, `-versions`, `-chunks`, `-vector-cache`, `-meta`, `-outbox`). */
  readonly indexPrefix: string;
  /** Primary shards of each index created (default 1). */
  readonly shards?: number;
  /** Replicas of each index created (default 0). */
  readonly replicas?: number;
  /** How writes become visible to search before their promise resolves (default `true`: refresh at once). */
  readonly refresh?: RefreshPolicy;
  /** Timeout of one request in milliseconds (default 30000). */
  readonly requestTimeoutMs?: number;
  /**
   * HNSW beam width of a vector query (`method_parameters.ef_search`, default 200); a query of k
   * candidates uses at least k. Larger is slower and closer to exact.
   */
  readonly efSearch?: number;
  /**
   * How often, once the change mark (`changeMark`) has been asked, the store asks the cluster
   * whether the documents and versions indexes changed (default 500 ms): the bound on how late the
   * mark notices another process's writes.
   */
  readonly changePollMs?: number;
  /**
   * Periodic refresh interval of the documents index in milliseconds (default 250): how long a
   * new document or a status a pipeline stage sets may take to show in another instance's lists
   * (this instance refreshes the index before its own next list).
   */
  readonly documentsRefreshMs?: number;
  /**
   * `index.max_result_window` of the indexes (default 10000, OpenSearch's own): the
   * largest search answer, and the offset up to which list pages are read directly rather than
   * walked to.
   */
  readonly maxResultWindow?: number;
}

/** A document source with the sequence number and primary term that guard a conditional write. */
export interface Guarded<S> {
  readonly source: S;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/** Page size of internal scans (ids of a version's chunks, all versions of a document). */
export const SCAN_PAGE = 1000;
/** Most ids of one `_mget`. */
const MGET_BATCH = 1000;
/**
 * How long a lookup or write made while none is in flight waits for others to share its request:
 * a stage handler makes several in a row, so a few milliseconds each, against requests whose
 * engine-side and client-side cost is paid once for every caller that joins.
 */
const GATHER_MS = 3;
/** Attempts of an optimistic read-modify-write before giving up with a retriable conflict. */
const MAX_ATTEMPTS = 60;
export const INDEX_MODEL_ID = 'index-model';
export const NO_VECTORS = { excludes: [`${VECTOR_FIELD_PREFIX}*`] };
export const BY_CHUNK_ID = [{ id: 'asc' }];

/** Jittered exponential backoff between attempts of an optimistic write; gives up after {@link MAX_ATTEMPTS}. */
export async function backoff(attempt: number, what: string): Promise<void> {
  if (attempt + 1 >= MAX_ATTEMPTS) {
    throw new KbError('conflict', `${what}: too many concurrent changes, try again`, { retriable: true });
  }
  await sleep(backoffDelay(attempt + 1, 4, 200));
}

/**
 * The source of a found record with its guard; null when it was not found. A lookup whose shard
 * did not answer throws `engine-unavailable` (it is not "not found").
 */
function guardedOf<S>(hit: SourceHit<S>): Guarded<S> | null {
  requireLookupAnswer(hit, 'record');
  if (hit.found !== true || hit._source === undefined) return null;
  return { source: hit._source, seqNo: hit._seq_no ?? 0, primaryTerm: hit._primary_term ?? 0 };
}

export function isZero(vector: Float32Array): boolean {
  return vector.every((value) => value === 0);
}

/**
 * How a write becomes visible to searches: `now`, when its promise resolves, by a refresh (shared
 * with concurrent callers); `own-reads`, to this instance's searches when its promise resolves (its
 * next search of the index refreshes first, one refresh for every write before it, and none while
 * nobody searches) and to other instances' with the index's next periodic refresh; `later`: the
 * caller refreshes (once) itself, or lets the periodic refresh show it.
 */
export type Visibility = 'now' | 'own-reads' | 'later';

/** What the roles of one OpenSearch document store share: the client, the index names and the low-level reads and writes. */
export type OpenSearchContext = Awaited<ReturnType<typeof openOpenSearchContext>>;

/**
 * Connects to the cluster, creates the indexes that are missing (or brings the mappings and
 * result window of existing ones up to date) and returns the shared context of the roles.
 */
export async function openOpenSearchContext(options: OpenSearchDocumentStoreOptions) {
  const http = createEngineHttp({ url: options.url, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
  const efSearch = options.efSearch ?? 200;
  const names = indexNames(options.indexPrefix);
  const refresh: RefreshPolicy = options.refresh ?? true;
  const resultWindow = options.maxResultWindow ?? 10_000;
  const scanPage = Math.min(SCAN_PAGE, resultWindow);
  const refreshQuery = { refresh: String(refresh) };
  const refreshFor = (visibility: Visibility): RefreshPolicy | false => (visibility === 'now' ? refresh : false);

  /** Indexes this instance wrote to without a refresh: its next search of one refreshes it first. */
  const unrefreshed = new Set<string>();
  const sharedRefresh = createSharedRefresh(async (indexes) => {
    await http.request('POST', `/${indexes}/_refresh`);
  });
  async function refreshIndexes(indexes: readonly string[]): Promise<void> {
    await sharedRefresh([...indexes].sort().join(','));
  }
  /**
   * How a single-record write made with `visibility` is shown: `refresh=true` becomes a shared
   * refresh after the write (same visibility when the promise resolves, one refresh for the writes
   * of concurrent callers); `wait_for` stays on the request.
   */
  const afterWrite = (visibility: Visibility) => (visibility === 'now' && refresh === true ? 'shared' : visibility);
  /** The `refresh` parameter of a single-record write shown as `afterWrite` says. */
  const refreshParameter = (shown: ReturnType<typeof afterWrite>): Record<string, string> =>
    shown === 'now' ? { ...refreshQuery } : {};
  /** Makes this instance's unrefreshed writes to `index` visible to its own searches of it. */
  async function settle(index: string): Promise<void> {
    if (!unrefreshed.delete(index)) return;
    await refreshIndexes([index]);
  }
  /** Makes this instance's unrefreshed chunk writes visible to its own searches of them. */
  async function settleChunks(): Promise<void> {
    await settle(names.chunks);
  }
  const path = (index: string, endpoint: string, id: string) => `/${index}/${endpoint}/${encodeURIComponent(id)}`;

  // ---- Low-level reads and writes ----

  /**
   * Lookups by id of every caller, coalesced: the lookups asked while an `_mget` is in flight go
   * out together in the next one (real-time, like a GET), so the stage handlers of many documents
   * share one request instead of sending one each.
   */
  const lookUp = createCoalescedCalls<
    { readonly index: string; readonly id: string; readonly withVectors: boolean },
    SourceHit<unknown>
  >(
    async (records) =>
      (
        await http.request<{ docs: SourceHit<unknown>[] }>('POST', '/_mget', {
          docs: records.map((record) => ({
            _index: record.index,
            _id: record.id,
            ...(record.withVectors ? {} : { _source: { excludes: [`${VECTOR_FIELD_PREFIX}*`] } }),
          })),
        })
      ).body.docs,
    { maxItems: MGET_BATCH, gatherMs: GATHER_MS },
  );

  /**
   * Writes of every caller that need no refresh parameter (single records, chunk batches, vector
   * cache entries, copies of a serving change), coalesced the same way into one `_bulk` (split
   * at 500 actions a request); each caller gets the answers of its own actions, in order.
   */
  const bulkTogether = createCoalescedCalls<readonly BulkAction[], BulkItemResult[]>(
    async (lists) => {
      const results = await http.bulk(lists.flat(), false);
      let at = 0;
      return lists.map((list) => {
        const own = results.slice(at, at + list.length);
        at += list.length;
        return own;
      });
    },
    { maxItems: 100, gatherMs: GATHER_MS },
  );
  const writeOne = async (action: BulkAction): Promise<BulkItemResult> => {
    const [result] = await bulkTogether([action]);
    if (result === undefined) throw new KbError('internal-error', `OpenSearch answered no item for ${action.id}`);
    return result;
  };
  /** A `_bulk` of `actions`: coalesced with other callers' when it needs no refresh, else alone. */
  async function bulk(actions: readonly BulkAction[], refreshPolicy: RefreshPolicy | false): Promise<BulkItemResult[]> {
    if (actions.length === 0) return [];
    return refreshPolicy === false ? bulkTogether(actions) : http.bulk(actions, refreshPolicy);
  }

  async function getGuarded<S>(index: string, id: string, query: Json = {}): Promise<Guarded<S> | null> {
    const keys = Object.keys(query);
    if (keys.length === 0 || (keys.length === 1 && query._source_excludes === `${VECTOR_FIELD_PREFIX}*`)) {
      return guardedOf((await lookUp({ index, id, withVectors: keys.length === 0 })) as SourceHit<S>);
    }
    const response = await http.request<SourceHit<S>>('GET', path(index, '_doc', id), undefined, {
      allow: [404],
      query: query as Record<string, string>,
    });
    return response.status === 404 ? null : guardedOf(response.body);
  }

  /**
   * Records of any indexes by id (lookups by id, real-time, coalesced with other callers'), each
   * with its guard, in the order asked; null where a record does not exist. Vectors are left out.
   */
  async function getGuardedMany(
    records: readonly { readonly index: string; readonly id: string }[],
  ): Promise<(Guarded<unknown> | null)[]> {
    const hits = await Promise.all(records.map((record) => lookUp({ ...record, withVectors: false })));
    return hits.map(guardedOf);
  }

  const getDocument = (id: string) => getGuarded<DocumentSource>(names.documents, id);
  const getVersionSource = async (documentId: string, version: number) =>
    (await getGuarded<VersionSource>(names.versions, versionId(documentId, version)))?.source ?? null;

  /**
   * Writes a whole source: `create` only if the id is free, a guard only if unchanged since read.
   * Resolves false when the condition failed (409), else the guard of the record as written.
   */
  async function put(
    index: string,
    id: string,
    source: object,
    condition: 'create' | Guarded<unknown> | null,
    visibility: Visibility = 'now',
  ) {
    const shown = afterWrite(visibility);
    if (shown !== 'now') {
      const item = await writeOne({
        kind: 'index',
        index,
        id,
        source: source as Json,
        ...(condition === 'create' ? { create: true } : {}),
        ...(condition !== null && condition !== 'create'
          ? { guard: { seqNo: condition.seqNo, primaryTerm: condition.primaryTerm } }
          : {}),
      });
      if (item.status === 409) return false;
      if (item.status >= 300) throw bulkItemError(item, `write ${index}/${id}`);
      if (shown === 'shared') await refreshIndexes([index]);
      if (shown === 'own-reads') unrefreshed.add(index);
      const written: Omit<Guarded<unknown>, 'source'> = { seqNo: item.seqNo ?? 0, primaryTerm: item.primaryTerm ?? 0 };
      return written;
    }
    const query: Record<string, string | number> = refreshParameter(shown);
    if (condition === 'create') query.op_type = 'create';
    else if (condition !== null) {
      query.if_seq_no = condition.seqNo;
      query.if_primary_term = condition.primaryTerm;
    }
    const response = await http.request<{ _seq_no?: number; _primary_term?: number }>(
      'PUT',
      path(index, '_doc', id),
      source,
      { query, allow: [409] },
    );
    if (response.status === 409) return false;
    const written: Omit<Guarded<unknown>, 'source'> = {
      seqNo: response.body._seq_no ?? 0,
      primaryTerm: response.body._primary_term ?? 0,
    };
    return written;
  }

  /** Partial update or script; resolves false when the record does not exist. */
  async function update(index: string, id: string, body: Json, visibility: Visibility = 'now'): Promise<boolean> {
    return (await updateReturning(index, id, body, visibility, false)) !== null;
  }

  /**
   * Partial update that answers the record as it is after the update (in the same request, so
   * no read of it follows); null when the record does not exist.
   */
  async function updateAndGet<S>(index: string, id: string, body: Json, visibility: Visibility): Promise<S | null> {
    const updated = await updateReturning<S>(index, id, body, visibility, true);
    if (updated === null) return null;
    return updated.source ?? (await getGuarded<S>(index, id))?.source ?? null;
  }

  async function updateReturning<S>(
    index: string,
    id: string,
    body: Json,
    visibility: Visibility,
    withSource: boolean,
  ): Promise<{ source: S | undefined } | null> {
    const shown = afterWrite(visibility);
    if (shown !== 'now') {
      const item = await writeOne({ kind: 'update', index, id, body, retryOnConflict: 10, withSource });
      if (item.status === 404) return null;
      if (item.status >= 300) throw bulkItemError(item, `update ${index}/${id}`);
      if (shown === 'shared') await refreshIndexes([index]);
      if (shown === 'own-reads') unrefreshed.add(index);
      return { source: item.source as S | undefined };
    }
    const response = await http.request<{ get?: { _source?: S } }>('POST', path(index, '_update', id), body, {
      query: {
        ...refreshParameter(shown),
        retry_on_conflict: 10,
        ...(withSource ? { _source: 'true' } : {}),
      },
      allow: [404],
    });
    if (response.status === 404) return null;
    return { source: response.body.get?._source };
  }

  async function mget<S>(index: string, ids: readonly string[]): Promise<Map<string, S>> {
    const found = new Map<string, S>();
    const unique = [...new Set(ids)];
    // Coalesced with other callers' lookups (at most MGET_BATCH ids a request).
    const docs = await Promise.all(unique.map((id) => lookUp({ index, id, withVectors: false })));
    for (const doc of docs as SourceHit<S>[]) {
      requireLookupAnswer(doc, `a record of ${index}`);
      if (doc.found === true && doc._source !== undefined) found.set(doc._id, doc._source);
    }
    return found;
  }

  /**
   * A search of `index`. `complete`: every shard must answer (an unavailable one fails the search
   * with `engine-unavailable` instead of leaving its records out), for scans whose result is acted on.
   */
  async function search<S>(index: string, body: Json, complete = false): Promise<SearchBody<S>> {
    await settle(index);
    const query = complete ? { query: { allow_partial_search_results: false } } : {};
    return (await http.request<SearchBody<S>>('POST', `/${index}/_search`, body, query)).body;
  }

  async function count(index: string, query: Json): Promise<number> {
    await settle(index);
    return (await http.request<CountBody>('POST', `/${index}/_count`, { query })).body.count;
  }

  /** Every hit of `query`, in pages ordered by `sort` (which must be unique per record). */
  async function scanAll<S>(index: string, query: Json, sort: Json[], source: unknown): Promise<SourceHit<S>[]> {
    const all: SourceHit<S>[] = [];
    let after: readonly unknown[] | undefined;
    for (;;) {
      const body: Json = { query, sort, size: scanPage, _source: source, track_total_hits: false };
      if (after !== undefined) body.search_after = after;
      const hits = (await search<S>(index, body, true)).hits.hits;
      all.push(...hits);
      const last = hits[hits.length - 1];
      if (hits.length < scanPage || last?.sort === undefined) return all;
      after = last.sort;
    }
  }

  const versionChunksQuery = (documentId: string, version: number): Json => ({
    bool: { filter: [{ term: { document_id: documentId } }, { term: { version } }] },
  });

  async function chunkIds(query: Json): Promise<string[]> {
    return (await scanAll(names.chunks, query, BY_CHUNK_ID, false)).map((hit) => hit._id);
  }

  /**
   * Ids of a version's chunks: `<document>:<version>:<index>` for indexes below `count` when the
   * count is known (no search, so chunks written a moment ago and not yet refreshed are included),
   * else every chunk a search finds (which refreshes first if this instance has unrefreshed chunk writes).
   */
  async function versionChunkIds(documentId: string, version: number, count: number | null): Promise<string[]> {
    if (count !== null && count > 0)
      return Array.from({ length: count }, (_, index) => chunkId(documentId, version, index));
    return chunkIds(versionChunksQuery(documentId, version));
  }

  /** Deletes the records of `index` matching `query`, by id (a concurrently deleted one is fine). */
  async function deleteMatching(index: string, query: Json, sort: Json[]): Promise<void> {
    await deleteIds(
      index,
      (await scanAll(index, query, sort, false)).map((hit) => hit._id),
    );
  }

  /** Deletes the records of `index` with these ids (a missing one is fine). */
  async function deleteIds(index: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const results = await http.bulk(
      ids.map((id): BulkAction => ({ kind: 'delete', index, id })),
      refresh,
    );
    requireBulkSuccess(results, `delete from ${index}`, [404]);
  }

  /** Runs bulk updates, retrying the ones that still conflicted after the engine's own retries. */
  async function bulkUpdate(
    index: string,
    updates: readonly { id: string; body: Json }[],
    what: string,
    visibility: Visibility = 'now',
  ) {
    let pending = updates;
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      const results = await bulk(
        pending.map((entry): BulkAction => ({ kind: 'update', index, id: entry.id, body: entry.body })),
        refreshFor(visibility),
      );
      const conflicted = new Set(results.filter((result) => result.status === 409).map((result) => result.id));
      requireBulkSuccess(results, what, [404, 409]);
      pending = pending.filter((entry) => conflicted.has(entry.id));
      if (pending.length > 0) await backoff(attempt, what);
    }
    if (visibility === 'own-reads' && updates.length > 0) unrefreshed.add(index);
  }

  async function readIndexModel(): Promise<IndexModel | null> {
    const meta = await getGuarded<IndexModel>(names.meta, INDEX_MODEL_ID);
    return meta === null ? null : { model: meta.source.model, dimensions: meta.source.dimensions };
  }

  /**
   * The index model for queries, read at most once per change-poll interval: a query asks for it
   * twice (the search service, then the vector search), and it changes only when the model is
   * switched. A switch through this instance shows at once, through another within the interval.
   */
  const modelTtlMs = options.changePollMs ?? 500;
  let modelRead: { at: number; model: Promise<IndexModel | null> } | null = null;
  function queryIndexModel(): Promise<IndexModel | null> {
    const now = Date.now();
    if (modelRead === null || now - modelRead.at > modelTtlMs) {
      const model = readIndexModel();
      modelRead = { at: now, model };
      // A failed read is not kept.
      model.catch(() => {
        if (modelRead?.model === model) modelRead = null;
      });
    }
    return modelRead.model;
  }

  /** {@link requireIndexModel}, and the vector must also be finite and non-zero (cosine needs both). */
  function requireVectorOf(model: IndexModel | null, vector: Float32Array, what: string): IndexModel {
    const checked = requireIndexModel(model, vector, what);
    if (!vector.every(Number.isFinite)) throw new KbError('bad-request', `${what}: vector has non-finite values`);
    if (isZero(vector)) throw new KbError('bad-request', `${what}: a zero vector has no cosine similarity`);
    return checked;
  }

  async function ensureVectorField(dimensions: number): Promise<void> {
    await http.request('PUT', `/${names.chunks}/_mapping`, {
      properties: { [vectorField(dimensions)]: vectorFieldMapping(dimensions) },
    });
  }

  function searchLimit(limit: number): number {
    return Math.min(resultWindow, Math.max(0, Math.floor(limit)));
  }

  // ---- Start-up: indexes and mappings ----

  const layout = {
    shards: options.shards ?? 1,
    replicas: options.replicas ?? 0,
    maxResultWindow: resultWindow,
    documentsRefreshInterval: `${options.documentsRefreshMs ?? 250}ms`,
  };
  /**
   * Creates the index, or brings an existing one's mappings and result window up to date.
   * Idempotent under concurrency: when another process creates it between the check and the
   * creation, this one waits until the index's primary shard is active (the creator's request
   * returns once it is; this one's does at once) and then updates it like any existing index.
   */
  async function ensureIndex(definition: ReturnType<typeof indexDefinitions>[number]): Promise<void> {
    const exists = await http.request('HEAD', `/${definition.name}`, undefined, { allow: [404] });
    if (exists.status === 404) {
      const created = await http.request<{ error?: { type?: string } }>(
        'PUT',
        `/${definition.name}`,
        { settings: definition.settings, mappings: definition.mappings },
        { allow: [400] },
      );
      if (created.status !== 400) return;
      if (created.body.error?.type !== 'resource_already_exists_exception') {
        throw new KbError('config-invalid', `Cannot create index ${definition.name}: ${JSON.stringify(created.body)}`);
      }
      await http.request('GET', `/_cluster/health/${definition.name}`, undefined, {
        query: { wait_for_status: 'yellow', timeout: '30s' },
      });
    }
    // New fields of a newer adapter, and the result window the adapter counts on.
    await http.request('PUT', `/${definition.name}/_mapping`, { properties: definition.mappings.properties });
    const refreshInterval = definition.name === names.documents ? layout.documentsRefreshInterval : undefined;
    await http.request('PUT', `/${definition.name}/_settings`, {
      index: {
        max_result_window: resultWindow,
        ...(refreshInterval === undefined ? {} : { refresh_interval: refreshInterval }),
      },
    });
  }

  try {
    for (const definition of indexDefinitions(names, layout)) await ensureIndex(definition);
    const startModel = await readIndexModel();
    if (startModel !== null) await ensureVectorField(startModel.dimensions);
  } catch (error) {
    await http.close();
    throw error;
  }

  return {
    http,
    bulk,
    names,
    efSearch,
    resultWindow,
    scanPage,
    refresh,
    refreshQuery,
    refreshFor,
    refreshIndexes,
    settleChunks,
    path,
    getGuarded,
    getGuardedMany,
    getDocument,
    getVersionSource,
    put,
    update,
    updateAndGet,
    mget,
    search,
    count,
    scanAll,
    versionChunksQuery,
    chunkIds,
    versionChunkIds,
    deleteMatching,
    deleteIds,
    bulkUpdate,
    searchLimit,
    readIndexModel,
    queryIndexModel,
    requireVectorOf,
    ensureVectorField,
    /** Notes chunks written without a refresh: this instance's next search of them refreshes first. */
    markChunksPending(): void {
      unrefreshed.add(names.chunks);
    },
    /** Refreshes the chunks index now (whoever wrote them), settling this instance's pending writes too. */
    async refreshChunks(): Promise<void> {
      unrefreshed.delete(names.chunks);
      await refreshIndexes([names.chunks]);
    },
    /** Drops the cached index model, so the next query reads it again. */
    forgetIndexModel(): void {
      modelRead = null;
    },
  };
}
