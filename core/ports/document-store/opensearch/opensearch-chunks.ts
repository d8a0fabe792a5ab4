import { KbError } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { ChunkIndex, ChunkInput, SearchHit, StoreSearchQuery } from '../document-store.port.ts';
import { toChunkRecord, toStoredChunkFields } from '../stored-records.ts';
import { BY_CHUNK_ID, isZero, NO_VECTORS, type OpenSearchContext } from './opensearch-context.ts';
import { type BulkAction, requireBulkSuccess, type SourceHit } from './opensearch-http.ts';
import { VECTOR_FIELD_PREFIX, vectorField } from './opensearch-mappings.ts';
import {
  type ChunkSource,
  chunkId,
  type DerivedChunkFields,
  type DocumentSource,
  derivedChunkFields,
  type VersionSource,
  versionId,
} from './opensearch-records.ts';
import { cosineFromScore, hasWords, searchFilterClauses, servedAtClauses } from './opensearch-search.ts';
import { createServing } from './opensearch-serving.ts';

/** A chunk as written, without the fields copied from its version and document. */
type ChunkBase = Omit<ChunkSource, keyof DerivedChunkFields>;

/**
 * The records a writer of chunks has just read or written itself, so the chunk writer need not read
 * them again: documents by id, versions by version id (`<document>:<version>`), and the index
 * model (null: none is set yet).
 */
export interface KnownSources {
  readonly documents?: ReadonlyMap<string, DocumentSource>;
  readonly versions?: ReadonlyMap<string, VersionSource>;
  readonly model?: IndexModel | null;
}

/** Sources of `ids`: the known ones, the rest read by id. */
async function sourcesOf<S>(
  known: ReadonlyMap<string, S> | undefined,
  ids: readonly string[],
  read: (ids: readonly string[]) => Promise<Map<string, S>>,
): Promise<Map<string, S>> {
  const found = new Map<string, S>();
  for (const id of ids) {
    const source = known?.get(id);
    if (source !== undefined) found.set(id, source);
  }
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) for (const [id, source] of await read(missing)) found.set(id, source);
  return found;
}

/**
 * Writes chunks as `putChunks` does: whole chunks with the fields copied from their versions and
 * documents (so a chunk of a version served already is written served), then re-reads the
 * documents and copies again where serving changed meanwhile.
 */
export function createChunkWriter(context: OpenSearchContext) {
  const { names, getVersionSource, mget, settleChunks, readIndexModel, requireVectorOf } = context;
  const { syncChunks } = createServing(context);
  const versionKey = (documentId: string, version: number) => versionId(documentId, version);

  /**
   * Writes whole chunks with the fields copied from their versions and documents, then re-reads
   * the documents: if one changed meanwhile (a completion or deletion whose copy may have missed
   * these chunks), copies again. Chunks of a version served already are refreshed at the end,
   * unless `refreshServed` is false (the caller refreshes them itself, once, with its own writes).
   */
  async function writeChunks(chunks: readonly ChunkBase[], refreshServed = true, known?: KnownSources): Promise<void> {
    if (chunks.length === 0) return;
    const keys = new Map<string, { documentId: string; version: number }>();
    for (const chunk of chunks) {
      keys.set(versionKey(chunk.document_id, chunk.version), { documentId: chunk.document_id, version: chunk.version });
    }
    const documentIds = [...new Set(chunks.map((chunk) => chunk.document_id))];
    const documents = await sourcesOf(known?.documents, documentIds, (ids) =>
      mget<DocumentSource>(names.documents, ids),
    );
    const versions = await sourcesOf(known?.versions, [...keys.keys()], (ids) =>
      mget<VersionSource>(names.versions, ids),
    );
    const derived = new Map<string, DerivedChunkFields>();
    for (const [key, { documentId, version }] of keys) {
      derived.set(key, derivedChunkFields(documents.get(documentId) ?? null, version, versions.get(key) ?? null));
    }
    const results = await context.bulk(
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
    context.markChunksPending();
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
    if (servedAlready && refreshServed) await settleChunks();
  }

  /** Checks the vectors against the index model and writes the chunks (see {@link writeChunks}). */
  async function putChunks(chunks: readonly ChunkInput[], refreshServed = true, known?: KnownSources): Promise<void> {
    if (chunks.length === 0) return;
    const withVectors = chunks.some((chunk) => chunk.vector);
    const model = !withVectors ? null : known?.model !== undefined ? known.model : await readIndexModel();
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
      refreshServed,
      known,
    );
  }

  return { writeChunks, putChunks };
}

/**
 * The {@link ChunkIndex} role of the OpenSearch document store: chunks carry copies of their
 * version's served interval and fields, so search filters need no join; keyword search is BM25
 * on `content`, vector search a k-NN query on the vector field of the index model's dimensions.
 */
export function createOpenSearchChunkIndex(context: OpenSearchContext): ChunkIndex {
  const {
    names,
    efSearch,
    getGuarded,
    search,
    count,
    scanAll,
    versionChunksQuery,
    deleteMatching,
    searchLimit,
    readIndexModel,
    queryIndexModel,
  } = context;
  const { writeChunks, putChunks } = createChunkWriter(context);

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

  return {
    putChunks: (chunks) => putChunks(chunks),

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
  };
}
