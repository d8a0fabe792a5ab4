import { createHash } from 'node:crypto';
import { KbError } from '../../errors/kb-error.ts';
import type {
  ChunkInput,
  DocumentListQuery,
  DocumentRecord,
  DocumentStore,
  IndexModel,
  NewDocument,
  SearchHit,
  StoreSearchQuery,
  VersionPatch,
  VersionRecord,
  VersionStatus,
} from './document-store.port.ts';
import { VERSION_STATUSES } from './document-store.port.ts';
import {
  type BulkAction,
  type CountBody,
  createEngineHttp,
  type Json,
  type RefreshPolicy,
  requireBulkSuccess,
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
import {
  type ChunkSource,
  chunkId,
  type DerivedChunkFields,
  type DocumentSource,
  decodeVector,
  derivedChunkFields,
  encodeVector,
  later,
  newVersionSource,
  servedInterval,
  toDocumentRecord,
  type VectorCacheSource,
  type VersionSource,
  versionId,
} from './opensearch-records.ts';
import { cosineFromScore, hasWords, searchFilterClauses, servedAtClauses } from './opensearch-search.ts';
import {
  canonicalTime,
  requireIndexModel,
  toChunkRecord,
  toStoredChunkFields,
  toStoredProgress,
  toVersionRecord,
} from './stored-records.ts';

export interface OpenSearchDocumentStoreOptions {
  /** Base URL of the cluster, e.g. `http://127.0.0.1:9200`. */
  readonly url: string;
  /** Prefix of the five index names (`<prefix>-documents`, `-versions`, `-chunks`, `-vector-cache`, `-meta`). */
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
   * How often, once {@link DocumentStore.changeMark} has been asked, the store asks the cluster
   * whether the documents and versions indexes changed (default 500 ms): the bound on how late the
   * mark notices another process's writes.
   */
  readonly changePollMs?: number;
  /**
   * `index.max_result_window` of the indexes (default 10000, OpenSearch's own): the
   * largest search answer, and the offset up to which list pages are read directly rather than
   * walked to.
   */
  readonly maxResultWindow?: number;
}

/** A document source with the sequence number and primary term that guard a conditional write. */
interface Guarded<S> {
  readonly source: S;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/** A chunk as written, without the fields copied from its version and document. */
type ChunkBase = Omit<ChunkSource, keyof DerivedChunkFields>;

/** Page size of internal scans (ids of a version's chunks, all versions of a document). */
const SCAN_PAGE = 1000;
/** Most ids of one `_mget`. */
const MGET_BATCH = 1000;
/** Attempts of an optimistic read-modify-write before giving up with a retriable conflict. */
const MAX_ATTEMPTS = 60;
const INDEX_MODEL_ID = 'index-model';
const NO_VECTORS = { excludes: [`${VECTOR_FIELD_PREFIX}*`] };
const BY_CHUNK_ID = [{ id: 'asc' }];

/** Copies the served interval and version fields onto a chunk unless it holds a newer copy. */
const SYNC_CHUNK_SCRIPT = `
  def current = ctx._source.served_rev;
  if (current != null && current > params.rev) {
    ctx.op = 'noop';
  } else {
    for (def entry : params.fields.entrySet()) { ctx._source[entry.getKey()] = entry.getValue(); }
  }`;

/** Copies the served interval onto a version unless it holds a newer copy. */
const SYNC_VERSION_SCRIPT = `
  def current = ctx._source.served_rev;
  if (current != null && current > params.rev) {
    ctx.op = 'noop';
  } else {
    ctx._source.served_from = params.from;
    ctx._source.served_until = params.until;
    ctx._source.served_rev = params.rev;
  }`;

/** Removes every stored vector and its model tag from a chunk. */
const DROP_VECTORS_SCRIPT = `
  def fields = new ArrayList();
  for (def key : ctx._source.keySet()) { if (key.startsWith(params.prefix)) { fields.add(key); } }
  for (def key : fields) { ctx._source.remove(key); }
  ctx._source.model = null;`;

const ARCHIVE_SCRIPT = `
  if (ctx._source.archived_at == null) { ctx._source.archived_at = params.at; } else { ctx.op = 'noop'; }`;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Jittered exponential backoff between attempts of an optimistic write; gives up after {@link MAX_ATTEMPTS}. */
async function backoff(attempt: number, what: string): Promise<void> {
  if (attempt + 1 >= MAX_ATTEMPTS) {
    throw new KbError('conflict', `${what}: too many concurrent changes, try again`, { retriable: true });
  }
  const ceiling = Math.min(200, 4 * 2 ** Math.min(attempt, 6));
  await sleep(Math.random() * ceiling);
}

function isZero(vector: Float32Array): boolean {
  return vector.every((value) => value === 0);
}

function cacheId(model: string, contentHash: string): string {
  return createHash('sha256')
    .update(JSON.stringify([model, contentHash]))
    .digest('hex');
}

/**
 * The distributed runtime's {@link DocumentStore} on OpenSearch with the k-NN plugin.
 *
 * Layout: five indexes named after `indexPrefix` (created at start-up when missing, strict
 * mappings): `-documents` (one per document; the authority for version allocation and serving),
 * `-versions` (id `<document>:<version>`), `-chunks` (id `<document>:<version>:<index>`, BM25 on
 * `content`, vectors in a Lucene HNSW cosine field `vector_d<dimensions>`), `-vector-cache` (id
 * derived from model and content hash, vector as base64 float32) and `-meta` (the index model).
 *
 * Adapter decisions beyond the port's contract:
 * - Timestamps are stored in canonical form (`Date#toISOString`) in `date` fields: a record
 *   returns `2024-01-01T00:00:00.000Z` for an input of `2024-01-01T00:00:00Z`, and ranges compare
 *   instants. Unparseable timestamps reject with `bad-request`.
 * - Every write whose result a search or list must see resolves after a refresh (`refresh`
 *   option, default `true`). Lookups by id are real-time and need none. Chunks are bulk-written
 *   without a refresh (this instance refreshes before its own next search of them); a completion
 *   refreshes the chunks once before copying the served interval onto them, writes those copies
 *   without a refresh, and refreshes all three indexes once before it marks the version
 *   `completed`, so whoever sees that status also finds the chunks in search.
 * - `changeMark` joins this instance's answered writes with the documents and versions indexes'
 *   indexing and refresh counters, polled every `changePollMs` once the mark has been asked for.
 * - Without transactions, each change is ordered so that the document record decides and the rest
 *   follows: `appendVersion` creates version `n+1` (`op_type=create`, the allocation) and then
 *   advances the document with a sequence-number guard; an append that finds `n+1` taken advances
 *   the document for it and retries, so numbers stay gap-free and a crashed append is adopted.
 *   `completeVersion` and `softDelete` change the document's serving history under the same guard,
 *   then copy the served intervals to the version and chunk records; the copies carry the
 *   document's revision and an older copy never overwrites a newer one. A version is marked
 *   `completed` last, so a retried completion repairs an interrupted one.
 * - Search filters need no join: each chunk carries its version's served interval, name, mime
 *   type and metadata (as `["key", value]` tokens for exact, type-exact filters) and its
 *   document's creation time. `putChunks` re-reads the document after writing and re-copies if
 *   serving changed meanwhile.
 * - Switching the index model to another dimension count adds a vector field for it; `replace`
 *   removes every stored vector from the chunks. Search and `hasVectors` only count vectors tagged
 *   with the current model.
 * - Updates of many chunks go through `_bulk` with the ids found by a search, so only core
 *   features are needed (no `_update_by_query`, no `_delete_by_query`).
 * - A zero query vector finds nothing (cosine is undefined); a zero chunk vector is refused with
 *   `bad-request` (the engine cannot index it).
 * - `completeVersion` of a missing version resolves `{served: false}`; `hasVectors` of a version
 *   without chunks is false; `archiveVersion` refuses (`conflict`) the version served now.
 * - Keyword search ORs the words of the text (Unicode words, lower-cased, diacritics folded,
 *   Porter-stemmed); the score is BM25.
 */
export async function createOpenSearchDocumentStore(options: OpenSearchDocumentStoreOptions): Promise<DocumentStore> {
  const http = createEngineHttp({ url: options.url, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
  const efSearch = options.efSearch ?? 200;
  const names = indexNames(options.indexPrefix);
  const refresh: RefreshPolicy = options.refresh ?? true;
  const resultWindow = options.maxResultWindow ?? 10_000;
  const scanPage = Math.min(SCAN_PAGE, resultWindow);
  const refreshQuery = { refresh: String(refresh) };
  /** `now`: the write is visible to search when it resolves; `later`: the caller refreshes (once) itself. */
  type Visibility = 'now' | 'later';
  const refreshFor = (visibility: Visibility): RefreshPolicy | false => (visibility === 'now' ? refresh : false);

  /** Chunks this instance wrote without a refresh: its next search of the chunks index refreshes first. */
  let chunksPending = false;
  async function refreshIndexes(indexes: readonly string[]): Promise<void> {
    await http.request('POST', `/${indexes.join(',')}/_refresh`);
  }
  /** Makes this instance's unrefreshed chunk writes visible to its own searches of them. */
  async function settleChunks(): Promise<void> {
    if (!chunksPending) return;
    chunksPending = false;
    await refreshIndexes([names.chunks]);
  }
  const path = (index: string, endpoint: string, id: string) => `/${index}/${endpoint}/${encodeURIComponent(id)}`;

  // ---- Low-level reads and writes ----

  async function getGuarded<S>(index: string, id: string, query: Json = {}): Promise<Guarded<S> | null> {
    const response = await http.request<SourceHit<S>>('GET', path(index, '_doc', id), undefined, {
      allow: [404],
      query: query as Record<string, string>,
    });
    const hit = response.body;
    if (response.status === 404 || hit.found !== true || hit._source === undefined) return null;
    return { source: hit._source, seqNo: hit._seq_no ?? 0, primaryTerm: hit._primary_term ?? 0 };
  }

  const getDocument = (id: string) => getGuarded<DocumentSource>(names.documents, id);
  const getVersionSource = async (documentId: string, version: number) =>
    (await getGuarded<VersionSource>(names.versions, versionId(documentId, version)))?.source ?? null;

  /**
   * Writes a whole source: `create` only if the id is free, a guard only if unchanged since read.
   * Resolves false when the condition failed (409).
   */
  async function put(
    index: string,
    id: string,
    source: object,
    condition: 'create' | Guarded<unknown> | null,
    visibility: Visibility = 'now',
  ) {
    const query: Record<string, string | number> = visibility === 'now' ? { ...refreshQuery } : {};
    if (condition === 'create') query.op_type = 'create';
    else if (condition !== null) {
      query.if_seq_no = condition.seqNo;
      query.if_primary_term = condition.primaryTerm;
    }
    const response = await http.request('PUT', path(index, '_doc', id), source, { query, allow: [409] });
    return response.status !== 409;
  }

  /** Partial update or script; resolves false when the record does not exist. */
  async function update(index: string, id: string, body: Json, visibility: Visibility = 'now'): Promise<boolean> {
    const response = await http.request('POST', path(index, '_update', id), body, {
      query: { ...(visibility === 'now' ? refreshQuery : {}), retry_on_conflict: 10 },
      allow: [404],
    });
    return response.status !== 404;
  }

  async function mget<S>(index: string, ids: readonly string[]): Promise<Map<string, S>> {
    const found = new Map<string, S>();
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += MGET_BATCH) {
      const batch = unique.slice(start, start + MGET_BATCH);
      const response = await http.request<{ docs: SourceHit<S>[] }>(
        'POST',
        `/${index}/_mget`,
        { ids: batch },
        { query: { _source_excludes: `${VECTOR_FIELD_PREFIX}*` } },
      );
      for (const doc of response.body.docs) {
        if (doc.found === true && doc._source !== undefined) found.set(doc._id, doc._source);
      }
    }
    return found;
  }

  async function search<S>(index: string, body: Json): Promise<SearchBody<S>> {
    if (index === names.chunks) await settleChunks();
    return (await http.request<SearchBody<S>>('POST', `/${index}/_search`, body)).body;
  }

  async function count(index: string, query: Json): Promise<number> {
    if (index === names.chunks) await settleChunks();
    return (await http.request<CountBody>('POST', `/${index}/_count`, { query })).body.count;
  }

  /** Every hit of `query`, in pages ordered by `sort` (which must be unique per record). */
  async function scanAll<S>(index: string, query: Json, sort: Json[], source: unknown): Promise<SourceHit<S>[]> {
    const all: SourceHit<S>[] = [];
    let after: readonly unknown[] | undefined;
    for (;;) {
      const body: Json = { query, sort, size: scanPage, _source: source, track_total_hits: false };
      if (after !== undefined) body.search_after = after;
      const hits = (await search<S>(index, body)).hits.hits;
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

  /** Deletes the records of `index` matching `query`, by id (a concurrently deleted one is fine). */
  async function deleteMatching(index: string, query: Json, sort: Json[]): Promise<void> {
    const ids = (await scanAll(index, query, sort, false)).map((hit) => hit._id);
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
      const results = await http.bulk(
        pending.map((entry): BulkAction => ({ kind: 'update', index, id: entry.id, body: entry.body })),
        refreshFor(visibility),
      );
      const conflicted = new Set(results.filter((result) => result.status === 409).map((result) => result.id));
      requireBulkSuccess(results, what, [404, 409]);
      pending = pending.filter((entry) => conflicted.has(entry.id));
      if (pending.length > 0) await backoff(attempt, what);
    }
  }

  // ---- Served state: copies from the document record to versions and chunks ----

  /** Copies a version's derived fields onto every chunk of it that exists now. */
  async function syncChunks(
    documentId: string,
    version: number,
    fields: DerivedChunkFields,
    visibility: Visibility = 'now',
  ): Promise<void> {
    const ids = await chunkIds(versionChunksQuery(documentId, version));
    const body = {
      script: { lang: 'painless', source: SYNC_CHUNK_SCRIPT, params: { rev: fields.served_rev, fields } },
    };
    await bulkUpdate(
      names.chunks,
      ids.map((id) => ({ id, body })),
      `sync chunks of ${versionId(documentId, version)}`,
      visibility,
    );
  }

  /** Copies the served intervals of `versions` from the document onto their version and chunk records. */
  async function propagate(
    document: DocumentSource,
    versions: readonly number[],
    visibility: Visibility = 'now',
  ): Promise<void> {
    for (const version of new Set(versions)) {
      const interval = servedInterval(document, version);
      await update(
        names.versions,
        versionId(document.id, version),
        {
          script: {
            lang: 'painless',
            source: SYNC_VERSION_SCRIPT,
            params: { rev: document.rev, from: interval.from, until: interval.until },
          },
        },
        visibility,
      );
      const source = await getVersionSource(document.id, version);
      await syncChunks(document.id, version, derivedChunkFields(document, version, source), visibility);
    }
  }

  /** The version whose interval deletion closed: the last one of the serving history. */
  function lastServed(document: DocumentSource): number[] {
    const last = document.served[document.served.length - 1];
    return last === undefined ? [] : [last.version];
  }

  /** Sets the document's mirrored status to its latest version's, if `version` is the latest. */
  async function mirrorStatus(
    documentId: string,
    version: number,
    at: string,
    visibility: Visibility = 'now',
  ): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      // The document is read before the version, so a write guarded by this read saw the newest status.
      const document = await getDocument(documentId);
      if (document === null || document.source.latest_version !== version) return;
      const current = await getVersionSource(documentId, version);
      if (current === null || current.status === document.source.status) return;
      const next: DocumentSource = {
        ...document.source,
        status: current.status,
        updated_at: at,
        rev: document.source.rev + 1,
      };
      if (await put(names.documents, documentId, next, document, visibility)) return;
      await backoff(attempt, `status of ${documentId}`);
    }
  }

  /** Advances the document's latest version to `version` (already created) unless it is there already. */
  async function advanceLatest(documentId: string, version: VersionSource): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      const document = await getDocument(documentId);
      if (document === null || document.source.latest_version >= version.version) return;
      const next: DocumentSource = {
        ...document.source,
        latest_version: version.version,
        status: version.status,
        updated_at: version.created_at,
        rev: document.source.rev + 1,
      };
      if (await put(names.documents, documentId, next, document)) return;
      await backoff(attempt, `version ${version.version} of ${documentId}`);
    }
  }

  // ---- Chunks ----

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

  const versionKey = (documentId: string, version: number) => versionId(documentId, version);

  /**
   * Writes whole chunks with the fields copied from their versions and documents, then re-reads
   * the documents: if one changed meanwhile (a completion or deletion whose copy may have missed
   * these chunks), copies again.
   */
  async function writeChunks(chunks: readonly ChunkBase[]): Promise<void> {
    if (chunks.length === 0) return;
    const keys = new Map<string, { documentId: string; version: number }>();
    for (const chunk of chunks) {
      keys.set(versionKey(chunk.document_id, chunk.version), { documentId: chunk.document_id, version: chunk.version });
    }
    const documentIds = [...new Set(chunks.map((chunk) => chunk.document_id))];
    const documents = await mget<DocumentSource>(names.documents, documentIds);
    const versions = await mget<VersionSource>(names.versions, [...keys.keys()]);
    const derived = new Map<string, DerivedChunkFields>();
    for (const [key, { documentId, version }] of keys) {
      derived.set(key, derivedChunkFields(documents.get(documentId) ?? null, version, versions.get(key) ?? null));
    }
    const results = await http.bulk(
      chunks.map(
        (chunk): BulkAction => ({
          kind: 'index',
          index: names.chunks,
          id: chunk.id,
          source: { ...chunk, ...derived.get(versionKey(chunk.document_id, chunk.version)) },
        }),
      ),
      // Chunks of a version are searched only once it is served, and `completeVersion` refreshes
      // before it serves them: no refresh per batch of chunks (chunks of a version served already
      // are refreshed at the end, below).
      false,
    );
    chunksPending = true;
    requireBulkSuccess(results, 'write chunks');
    const servedAlready = [...derived.values()].some((fields) => fields.served_from !== null);

    const after = await mget<DocumentSource>(names.documents, documentIds);
    for (const { documentId, version } of keys.values()) {
      const before = documents.get(documentId);
      const now = after.get(documentId);
      if ((before?.rev ?? 0) === (now?.rev ?? 0)) continue;
      const source = await getVersionSource(documentId, version);
      await syncChunks(documentId, version, derivedChunkFields(now ?? null, version, source));
    }
    if (servedAlready) await settleChunks();
  }

  /** The written part of a stored chunk: everything but the copied fields (vectors included). */
  function chunkBase(source: ChunkSource): ChunkBase {
    const base: Record<string, unknown> = {
      id: source.id,
      document_id: source.document_id,
      workspace_id: source.workspace_id,
      version: source.version,
      idx: source.idx,
      content: source.content,
      content_hash: source.content_hash,
      tokens: source.tokens,
      start_offset: source.start_offset,
      end_offset: source.end_offset,
      page: source.page ?? null,
      metadata: source.metadata ?? {},
      model: source.model ?? null,
    };
    for (const [key, value] of Object.entries(source)) {
      if (key.startsWith(VECTOR_FIELD_PREFIX) && Array.isArray(value)) base[key] = value;
    }
    return base as unknown as ChunkBase;
  }

  async function ensureVectorField(dimensions: number): Promise<void> {
    await http.request('PUT', `/${names.chunks}/_mapping`, {
      properties: { [vectorField(dimensions)]: vectorFieldMapping(dimensions) },
    });
  }

  /** Removes vectors (and model tags) from every chunk except those already of `keep`. */
  async function dropVectors(keep: IndexModel): Promise<void> {
    const ids = await chunkIds({
      bool: {
        filter: [{ exists: { field: 'model' } }],
        must_not: [
          {
            bool: {
              filter: [{ term: { model: keep.model } }, { exists: { field: vectorField(keep.dimensions) } }],
            },
          },
        ],
      },
    });
    const body = { script: { lang: 'painless', source: DROP_VECTORS_SCRIPT, params: { prefix: VECTOR_FIELD_PREFIX } } };
    await bulkUpdate(
      names.chunks,
      ids.map((id) => ({ id, body })),
      'drop vectors',
    );
  }

  // ---- Search ----

  function toHits(hits: readonly SourceHit<ChunkSource>[], score: (raw: number) => number): SearchHit[] {
    return hits.flatMap((hit) => {
      const source = hit._source;
      if (source === undefined) return [];
      return [
        {
          chunk: toChunkRecord(source),
          score: score(hit._score ?? 0),
          documentName: source.v_name ?? '',
          documentMetadata: source.v_metadata ?? {},
          mimeType: source.v_mime_type ?? '',
        },
      ];
    });
  }

  function searchLimit(limit: number): number {
    return Math.min(resultWindow, Math.max(0, Math.floor(limit)));
  }

  // ---- Documents ----

  async function listDocuments(query: DocumentListQuery): Promise<{ documents: DocumentRecord[]; total: number }> {
    const filter: Json[] = [
      { term: { workspace_id: query.workspaceId } },
      { bool: { must_not: [{ exists: { field: 'deleted_at' } }] } },
    ];
    if (query.status !== undefined) filter.push({ term: { status: query.status } });
    if (query.source !== undefined) filter.push({ term: { source: query.source } });
    const created: Json = {};
    if (query.createdAfter !== undefined) created.gte = canonicalTime(query.createdAfter, 'createdAfter');
    if (query.createdBefore !== undefined) created.lt = canonicalTime(query.createdBefore, 'createdBefore');
    if (Object.keys(created).length > 0) filter.push({ range: { created_at: created } });
    // The total counts the whole filtered list, whatever the cursor or offset.
    const total = query.knownTotal ?? (await count(names.documents, { bool: { filter } }));

    const page = [...filter];
    if (query.after !== undefined) {
      const createdAt = canonicalTime(query.after.createdAt, 'after.createdAt');
      page.push({
        bool: {
          should: [
            { range: { created_at: { lt: createdAt } } },
            { bool: { filter: [{ term: { created_at: createdAt } }, { range: { id: { lt: query.after.id } } }] } },
          ],
          minimum_should_match: 1,
        },
      });
    }
    const limit = Math.min(resultWindow, Math.max(0, Math.floor(query.limit)));
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    if (limit === 0 || offset >= total) return { documents: [], total };
    const base: Json = { query: { bool: { filter: page } }, sort: [{ created_at: 'desc' }, { id: 'desc' }] };
    let searchAfter: readonly unknown[] | undefined;
    let from = offset;
    // Beyond the result window, walk to the offset by sort values first (`search_after` needs `from: 0`).
    while (from > 0 && offset + limit > resultWindow) {
      const size = Math.min(resultWindow, from);
      const skipped = await search<never>(names.documents, {
        ...base,
        size,
        _source: false,
        ...(searchAfter === undefined ? {} : { search_after: searchAfter }),
      });
      const last = skipped.hits.hits[skipped.hits.hits.length - 1];
      if (skipped.hits.hits.length < size || last?.sort === undefined) return { documents: [], total };
      searchAfter = last.sort;
      from -= size;
    }
    const body = await search<DocumentSource>(names.documents, {
      ...base,
      from,
      size: limit,
      ...(searchAfter === undefined ? {} : { search_after: searchAfter }),
    });
    const sources = body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [hit._source]));
    const latest = await mget<VersionSource>(
      names.versions,
      sources.map((source) => versionId(source.id, source.latest_version)),
    );
    const documents = sources.flatMap((source) => {
      const version = latest.get(versionId(source.id, source.latest_version));
      return version === undefined ? [] : [toDocumentRecord(source, version)];
    });
    return { documents, total };
  }

  // ---- Start-up: indexes and mappings ----

  const layout = { shards: options.shards ?? 1, replicas: options.replicas ?? 0, maxResultWindow: resultWindow };
  for (const definition of indexDefinitions(names, layout)) {
    const exists = await http.request('HEAD', `/${definition.name}`, undefined, { allow: [404] });
    if (exists.status === 404) {
      const created = await http.request<{ error?: { type?: string } }>(
        'PUT',
        `/${definition.name}`,
        { settings: definition.settings, mappings: definition.mappings },
        { allow: [400] },
      );
      // Another process may have created it between the check and the creation.
      if (created.status === 400 && created.body.error?.type !== 'resource_already_exists_exception') {
        throw new KbError('internal-error', `Cannot create index ${definition.name}: ${JSON.stringify(created.body)}`);
      }
    } else {
      // New fields of a newer adapter, and the result window the adapter counts on.
      await http.request('PUT', `/${definition.name}/_mapping`, { properties: definition.mappings.properties });
      await http.request('PUT', `/${definition.name}/_settings`, { index: { max_result_window: resultWindow } });
    }
  }
  const startModel = await readIndexModel();
  if (startModel !== null) await ensureVectorField(startModel.dimensions);

  let closed = false;

  // ---- Change mark: this instance's writes, and the indexing and refresh counters of the list's indexes ----

  let remoteMark = 'start';
  let pollFailures = 0;
  let poller: ReturnType<typeof setInterval> | null = null;
  let polling = false;
  const statsPath = `/${names.documents},${names.versions}/_stats/indexing,refresh`;
  interface IndexStats {
    readonly _all?: {
      readonly primaries?: {
        readonly indexing?: { readonly index_total?: number; readonly delete_total?: number };
        readonly refresh?: { readonly total?: number; readonly external_total?: number };
      };
    };
  }
  async function pollChanges(): Promise<void> {
    if (polling || closed) return;
    polling = true;
    try {
      const stats = (await http.request<IndexStats>('GET', statsPath)).body._all?.primaries;
      // A write counts once indexed, and again once a refresh made it visible to the list.
      remoteMark = [
        stats?.indexing?.index_total ?? 0,
        stats?.indexing?.delete_total ?? 0,
        stats?.refresh?.total ?? 0,
        stats?.refresh?.external_total ?? 0,
      ].join('-');
    } catch {
      // Unknown state: a new mark each time, so nothing read before is trusted.
      pollFailures += 1;
      remoteMark = `unreachable-${pollFailures}`;
    } finally {
      polling = false;
    }
  }
  function changeMark(): string {
    if (poller === null && !closed) {
      poller = setInterval(() => void pollChanges(), options.changePollMs ?? 500);
      poller.unref();
      void pollChanges();
    }
    return `${http.writes}.${remoteMark}`;
  }

  return {
    kind: 'opensearch',

    changeMark,

    async createDocument(input: NewDocument): Promise<DocumentRecord> {
      const version = newVersionSource(input.id, input.workspaceId, 1, input.firstVersion);
      const conflict = () =>
        new KbError('conflict', `Document ${input.id} already exists`, {
          retriable: false,
        });
      if (!(await put(names.versions, versionId(input.id, 1), version, 'create'))) throw conflict();
      const document: DocumentSource = {
        id: input.id,
        workspace_id: input.workspaceId,
        source: input.source,
        created_at: version.created_at,
        updated_at: version.created_at,
        deleted_at: null,
        latest_version: 1,
        served_version: null,
        status: 'pending',
        rev: 1,
        served: [],
      };
      if (!(await put(names.documents, input.id, document, 'create'))) {
        // A document record without its version 1 (an interrupted purge): leave it, drop ours.
        await http.request('DELETE', path(names.versions, '_doc', versionId(input.id, 1)), undefined, {
          query: refreshQuery,
          allow: [404],
        });
        throw conflict();
      }
      return toDocumentRecord(document, version);
    },

    async appendVersion(workspaceId, documentId, build): Promise<VersionRecord> {
      for (let attempt = 0; ; attempt += 1) {
        const document = await getDocument(documentId);
        if (document === null || document.source.workspace_id !== workspaceId || document.source.deleted_at !== null) {
          throw new KbError('not-found', `Document ${documentId} not found`);
        }
        const latest = await getVersionSource(documentId, document.source.latest_version);
        if (latest === null) throw new KbError('not-found', `Document ${documentId} has no versions`);
        const next = document.source.latest_version + 1;
        const source = newVersionSource(documentId, workspaceId, next, build(toVersionRecord(latest)));
        if (await put(names.versions, versionId(documentId, next), source, 'create')) {
          await advanceLatest(documentId, source);
          return toVersionRecord(source);
        }
        // Another append took `next`: advance the document for it, then try the number after.
        const taken = await getVersionSource(documentId, next);
        if (taken !== null) await advanceLatest(documentId, taken);
        await backoff(attempt, `append to ${documentId}`);
      }
    },

    async getDocument(workspaceId, documentId) {
      const document = await getDocument(documentId);
      if (document === null || document.source.workspace_id !== workspaceId || document.source.deleted_at !== null) {
        return null;
      }
      const latest = await getVersionSource(documentId, document.source.latest_version);
      return latest === null ? null : toDocumentRecord(document.source, latest);
    },

    listDocuments,

    async listVersions(workspaceId, documentId) {
      const hits = await scanAll<VersionSource>(
        names.versions,
        { bool: { filter: [{ term: { document_id: documentId } }, { term: { workspace_id: workspaceId } }] } },
        [{ version: 'desc' }],
        true,
      );
      return hits.flatMap((hit) => (hit._source === undefined ? [] : [toVersionRecord(hit._source)]));
    },

    async getVersion(documentId, version) {
      const source = await getVersionSource(documentId, version);
      return source === null ? null : toVersionRecord(source);
    },

    async updateVersion(documentId, version, patch: VersionPatch) {
      const current = await getVersionSource(documentId, version);
      if (current === null) return null;
      const fields: Json = {};
      if (patch.status !== undefined) fields.status = patch.status;
      if (patch.error !== undefined) fields.error = patch.error;
      if (patch.progress !== undefined) fields.progress = toStoredProgress(patch.progress);
      if (patch.chunkCount !== undefined) fields.chunk_count = patch.chunkCount;
      if (patch.tokens !== undefined) fields.tokens = patch.tokens;
      if (patch.embeddingModel !== undefined) fields.embedding_model = patch.embeddingModel;
      if (Object.keys(fields).length === 0) return toVersionRecord(current);
      if (!(await update(names.versions, versionId(documentId, version), { doc: fields }, 'later'))) return null;
      if (patch.status !== undefined && patch.status !== current.status) {
        await mirrorStatus(documentId, version, new Date().toISOString(), 'later');
      }
      // One refresh for the version and its document's mirrored status.
      await refreshIndexes([names.versions, names.documents]);
      const updated = await getVersionSource(documentId, version);
      return updated === null ? null : toVersionRecord(updated);
    },

    async completeVersion(documentId, version, result) {
      const at = canonicalTime(result.at, 'at');
      for (let attempt = 0; ; attempt += 1) {
        const current = await getVersionSource(documentId, version);
        if (current === null) return { served: false };
        if (current.status === 'completed') return { served: current.served_from !== null };
        const document = await getDocument(documentId);
        if (document === null) return { served: false };
        let source = document.source;
        // Already in the serving history: an interrupted completion, finished below.
        let served = source.served.some((entry) => entry.version === version);
        if (
          !served &&
          source.deleted_at === null &&
          (source.served_version === null || source.served_version < version)
        ) {
          const previous = source.served[source.served.length - 1];
          const next: DocumentSource = {
            ...source,
            served: [...source.served, { version, from: later(at, previous?.from ?? null) }],
            served_version: version,
            rev: source.rev + 1,
          };
          if (!(await put(names.documents, documentId, next, document, 'later'))) {
            await backoff(attempt, `complete ${versionId(documentId, version)}`);
            continue;
          }
          source = next;
          served = true;
        }
        if (served) {
          // The version's chunks were written without a refresh (by this or another process):
          // one refresh makes them all findable before their served interval is copied onto them.
          chunksPending = false;
          await refreshIndexes([names.chunks]);
          const position = source.served.findIndex((entry) => entry.version === version);
          const previous = source.served[position - 1];
          await propagate(source, previous === undefined ? [version] : [previous.version, version], 'later');
        }
        // One refresh for the whole serving change, before the version says `completed`: a reader
        // that sees the status (lookups by id are real-time) finds the chunks in search too.
        await refreshIndexes([names.documents, names.versions, names.chunks]);
        await update(names.versions, versionId(documentId, version), {
          doc: {
            status: 'completed',
            completed_at: at,
            chunk_count: result.chunkCount,
            tokens: result.tokens,
            embedding_model: result.embeddingModel,
            error: null,
          },
        });
        await mirrorStatus(documentId, version, at);
        return { served };
      }
    },

    async putChunks(chunks: readonly ChunkInput[]) {
      if (chunks.length === 0) return;
      const model = chunks.some((chunk) => chunk.vector) ? await readIndexModel() : null;
      for (const chunk of chunks) if (chunk.vector) requireVectorOf(model, chunk.vector, `Chunk ${chunk.id}`);
      await writeChunks(
        chunks.map((chunk) => {
          const base: Record<string, unknown> = {
            ...toStoredChunkFields(chunk),
            model: chunk.vector && model !== null ? model.model : null,
          };
          if (chunk.vector) base[vectorField(chunk.vector.length)] = Array.from(chunk.vector);
          return base as unknown as ChunkBase;
        }),
      );
    },

    async copyChunks(documentId, fromVersion, toVersion) {
      const hits = await scanAll<ChunkSource>(
        names.chunks,
        versionChunksQuery(documentId, fromVersion),
        [{ idx: 'asc' }, { id: 'asc' }],
        true,
      );
      const copies = hits.flatMap((hit) => {
        if (hit._source === undefined) return [];
        const base = chunkBase(hit._source);
        return [{ ...base, id: chunkId(documentId, toVersion, base.idx), version: toVersion }];
      });
      await writeChunks(copies);
      return copies.length;
    },

    async listChunks(documentId, version, page) {
      const ofVersion = versionChunksQuery(documentId, version);
      const total = await count(names.chunks, ofVersion);
      const size = searchLimit(page.limit);
      if (total === 0 || size === 0) return { chunks: [], total };
      const body = await search<ChunkSource>(names.chunks, {
        query: { bool: { filter: [ofVersion, { range: { idx: { gt: page.afterIndex } } }] } },
        sort: [{ idx: 'asc' }, { id: 'asc' }],
        size,
        _source: NO_VECTORS,
      });
      const chunks = body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [toChunkRecord(hit._source)]));
      return { chunks, total };
    },

    async getChunk(id) {
      const chunk = await getGuarded<ChunkSource>(names.chunks, id, { _source_excludes: `${VECTOR_FIELD_PREFIX}*` });
      return chunk === null ? null : toChunkRecord(chunk.source);
    },

    async deleteChunks(documentId, version) {
      await deleteMatching(names.chunks, versionChunksQuery(documentId, version), BY_CHUNK_ID);
    },

    async hasVectors(documentId, version) {
      const model = await readIndexModel();
      if (model === null) return false;
      const query = versionChunksQuery(documentId, version);
      const total = await count(names.chunks, query);
      if (total === 0) return false;
      const withVector = await count(names.chunks, {
        bool: {
          filter: [query, { term: { model: model.model } }, { exists: { field: vectorField(model.dimensions) } }],
        },
      });
      return withVector === total;
    },

    async getIndexModel() {
      return queryIndexModel();
    },

    async setIndexModel(model: IndexModel, setOptions?: { replace?: boolean }) {
      if (model.model.length === 0 || !Number.isInteger(model.dimensions) || model.dimensions <= 0) {
        throw new KbError('bad-request', `Invalid index model ${JSON.stringify(model)}`);
      }
      const wanted: IndexModel = { model: model.model, dimensions: model.dimensions };
      for (let attempt = 0; ; attempt += 1) {
        const current = await getGuarded<IndexModel>(names.meta, INDEX_MODEL_ID);
        if (
          current !== null &&
          current.source.model === wanted.model &&
          current.source.dimensions === wanted.dimensions
        ) {
          return;
        }
        if (current !== null && setOptions?.replace !== true) {
          if ((await count(names.chunks, { exists: { field: 'model' } })) > 0) {
            throw new KbError(
              'model-mismatch',
              `The index holds vectors of ${current.source.model} (${current.source.dimensions} dimensions); ` +
                `switching to ${wanted.model} (${wanted.dimensions}) needs replace`,
            );
          }
        }
        await ensureVectorField(wanted.dimensions);
        modelRead = null;
        const written = await put(names.meta, INDEX_MODEL_ID, wanted, current ?? 'create');
        modelRead = null;
        if (!written) {
          await backoff(attempt, 'set the index model');
          continue;
        }
        // Chunks written from now on carry the new model; every other vector goes.
        if (current !== null) await dropVectors(wanted);
        return;
      }
    },

    async scanChunks(page) {
      const size = searchLimit(page.limit);
      if (size === 0) return [];
      const body = await search<ChunkSource>(names.chunks, {
        query: { range: { id: { gt: page.afterId } } },
        sort: [{ id: 'asc' }],
        size,
        _source: NO_VECTORS,
      });
      return body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [toChunkRecord(hit._source)]));
    },

    async setChunkVectors(model, vectors) {
      if (vectors.size === 0) return;
      const index = await readIndexModel();
      if (index === null || index.model !== model) {
        throw new KbError('model-mismatch', `Vectors of ${model} do not belong to the index model ${index?.model}`);
      }
      for (const [id, vector] of vectors) requireVectorOf(index, vector, `Chunk ${id}`);
      const field = vectorField(index.dimensions);
      await bulkUpdate(
        names.chunks,
        [...vectors].map(([id, vector]) => ({ id, body: { doc: { [field]: Array.from(vector), model } } })),
        'set chunk vectors',
      );
    },

    async getCachedVectors(model, contentHashes) {
      const found = new Map<string, Float32Array>();
      const ids = new Map(contentHashes.map((hash) => [cacheId(model, hash), hash]));
      const sources = await mget<VectorCacheSource>(names.vectorCache, [...ids.keys()]);
      for (const [id, source] of sources) {
        const hash = ids.get(id);
        if (hash !== undefined && source.model === model && source.content_hash === hash) {
          found.set(hash, decodeVector(source.vector));
        }
      }
      return found;
    },

    async putCachedVectors(model, vectors) {
      if (vectors.size === 0) return;
      // Read back by id only (real-time), so no refresh is needed.
      const results = await http.bulk(
        [...vectors].map(
          ([hash, vector]): BulkAction => ({
            kind: 'index',
            index: names.vectorCache,
            id: cacheId(model, hash),
            source: { model, content_hash: hash, vector: encodeVector(vector) } satisfies VectorCacheSource,
          }),
        ),
        false,
      );
      requireBulkSuccess(results, 'cache vectors');
    },

    async keywordSearch(query: StoreSearchQuery) {
      const size = searchLimit(query.limit);
      const filter = [...servedAtClauses(query.asOf), ...searchFilterClauses(query.workspaceId, query.filters)];
      if (size === 0 || !hasWords(query.text)) return [];
      const body = await search<ChunkSource>(names.chunks, {
        // Score order (the default) without a tie-break keeps Lucene's top-k pruning.
        query: { bool: { must: [{ match: { content: { query: query.text } } }], filter } },
        track_total_hits: false,
        size,
        _source: NO_VECTORS,
      });
      return toHits(body.hits.hits, (score) => score);
    },

    async vectorSearch(query) {
      const size = searchLimit(query.limit);
      const filter = [...servedAtClauses(query.asOf), ...searchFilterClauses(query.workspaceId, query.filters)];
      const vector = query.vector;
      if (vector === undefined) throw new KbError('bad-request', 'Vector search needs a query vector');
      const model = await queryIndexModel();
      if (model === null) return [];
      if (vector.length !== model.dimensions) {
        throw new KbError(
          'model-mismatch',
          `Query vector has ${vector.length} dimensions, the index model ${model.model} has ${model.dimensions}`,
        );
      }
      if (!vector.every(Number.isFinite)) throw new KbError('bad-request', 'Query vector has non-finite values');
      if (size === 0 || isZero(vector)) return [];
      const body = await search<ChunkSource>(names.chunks, {
        query: {
          knn: {
            [vectorField(model.dimensions)]: {
              vector: Array.from(vector),
              k: size,
              method_parameters: { ef_search: Math.max(efSearch, size) },
              filter: { bool: { filter: [{ term: { model: model.model } }, ...filter] } },
            },
          },
        },
        track_total_hits: false,
        size,
        _source: NO_VECTORS,
      });
      return toHits(body.hits.hits, cosineFromScore);
    },

    async softDelete(workspaceId, documentId, at) {
      const when = canonicalTime(at, 'at');
      for (let attempt = 0; ; attempt += 1) {
        const document = await getDocument(documentId);
        if (document === null || document.source.workspace_id !== workspaceId) return null;
        if (document.source.deleted_at !== null) {
          // Finishes an interrupted deletion (the copies are idempotent), then answers as absent.
          await propagate(document.source, lastServed(document.source));
          return null;
        }
        const next: DocumentSource = {
          ...document.source,
          deleted_at: when,
          updated_at: when,
          served_version: null,
          rev: document.source.rev + 1,
        };
        if (!(await put(names.documents, documentId, next, document))) {
          await backoff(attempt, `delete ${documentId}`);
          continue;
        }
        await propagate(next, lastServed(next));
        const latest = await getVersionSource(documentId, next.latest_version);
        return latest === null ? null : toDocumentRecord(next, latest);
      }
    },

    async purge(workspaceId, documentId) {
      const document = await getDocument(documentId);
      if (document === null || document.source.workspace_id !== workspaceId) return false;
      const byDocument = { term: { document_id: documentId } };
      await deleteMatching(names.chunks, byDocument, BY_CHUNK_ID);
      await deleteMatching(names.versions, byDocument, [{ document_id: 'asc' }, { version: 'asc' }]);
      await http.request('DELETE', path(names.documents, '_doc', documentId), undefined, {
        query: refreshQuery,
        allow: [404],
      });
      return true;
    },

    async listExpiredVersions(workspaceId, cutoff) {
      const before = canonicalTime(cutoff, 'cutoff');
      const hits = await scanAll<VersionSource>(
        names.versions,
        {
          bool: {
            filter: [{ term: { workspace_id: workspaceId } }, { range: { served_until: { lt: before } } }],
            must_not: [{ exists: { field: 'archived_at' } }],
          },
        },
        [{ served_until: 'asc' }, { document_id: 'asc' }, { version: 'asc' }],
        true,
      );
      return hits.flatMap((hit) => (hit._source === undefined ? [] : [toVersionRecord(hit._source)]));
    },

    async archiveVersion(documentId, version, at) {
      const when = canonicalTime(at, 'at');
      const current = await getVersionSource(documentId, version);
      if (current === null) return;
      const document = await getDocument(documentId);
      const interval =
        document === null
          ? { from: current.served_from, until: current.served_until }
          : servedInterval(document.source, version);
      if (interval.from !== null && interval.until === null) {
        throw new KbError('conflict', `Version ${version} of ${documentId} is served now and cannot be archived`, {
          retriable: false,
        });
      }
      await deleteMatching(names.chunks, versionChunksQuery(documentId, version), BY_CHUNK_ID);
      await update(names.versions, versionId(documentId, version), {
        script: { lang: 'painless', source: ARCHIVE_SCRIPT, params: { at: when } },
      });
    },

    async archivedHorizon(workspaceId) {
      const body = await search<VersionSource>(names.versions, {
        query: {
          bool: {
            filter: [
              { term: { workspace_id: workspaceId } },
              { exists: { field: 'archived_at' } },
              { exists: { field: 'served_until' } },
            ],
          },
        },
        sort: [{ served_until: 'desc' }],
        size: 1,
        _source: ['served_until'],
      });
      return body.hits.hits[0]?._source?.served_until ?? null;
    },

    async listWorkspaces() {
      const workspaces: string[] = [];
      let after: Json | undefined;
      for (;;) {
        const body = await search<never>(names.documents, {
          size: 0,
          aggs: {
            workspaces: {
              composite: {
                size: SCAN_PAGE,
                sources: [{ workspace: { terms: { field: 'workspace_id' } } }],
                ...(after === undefined ? {} : { after }),
              },
            },
          },
        });
        const aggregation = body.aggregations?.workspaces as
          | { buckets: { key: { workspace: string } }[]; after_key?: Json }
          | undefined;
        const buckets = aggregation?.buckets ?? [];
        workspaces.push(...buckets.map((bucket) => bucket.key.workspace));
        if (buckets.length < SCAN_PAGE || aggregation?.after_key === undefined) return workspaces;
        after = aggregation.after_key;
      }
    },

    async countDocumentsByStatus() {
      const body = await search<never>(names.documents, {
        size: 0,
        query: { bool: { must_not: [{ exists: { field: 'deleted_at' } }] } },
        aggs: { statuses: { terms: { field: 'status', size: VERSION_STATUSES.length } } },
      });
      const buckets = (body.aggregations?.statuses as { buckets: { key: string; doc_count: number }[] } | undefined)
        ?.buckets;
      const counts = Object.fromEntries(VERSION_STATUSES.map((s) => [s, 0])) as Record<VersionStatus, number>;
      for (const bucket of buckets ?? []) {
        if (bucket.key in counts) counts[bucket.key as VersionStatus] = bucket.doc_count;
      }
      return counts;
    },

    async ping() {
      await http.request('GET', '/');
    },

    async close() {
      if (closed) return;
      closed = true;
      if (poller !== null) clearInterval(poller);
      await http.close();
    },
  };
}
