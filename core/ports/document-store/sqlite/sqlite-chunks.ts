import { KbError } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { ChunkIndex, ChunkInput, SearchHit, StoreSearchQuery } from '../document-store.port.ts';
import { requireIndexModel, toStoredChunkFields, vectorBytes } from '../stored-records.ts';
import { createCandidatePool } from './sqlite-candidate-pool.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { createPassingVersions, PASSING_CHUNKS, type PassingVersions, worthPlanning } from './sqlite-filter-plan.ts';
import { createIndexedKeywordSearch } from './sqlite-keyword-search.ts';
import { createPassingVectors } from './sqlite-passing-vectors.ts';
import { CHUNK_COLUMNS, type ChunkRow, HIT_COLUMNS, type HitRow, toChunkRecord, toSearchHit } from './sqlite-rows.ts';
import { ftsQuery, type SqlPart, searchConditions, servedAt } from './sqlite-search.ts';

type KeywordRow = HitRow & { readonly score: number };
type VectorRow = HitRow & { readonly distance: number };

/**
 * When a filtered vector query scans its passing versions' chunks exactly rather than asking the
 * vector index: a chunk scanned costs about what 0.75 index candidates checked cost (measured at
 * 100k chunks: 10,000 chunks scanned ≈ 75 ms, 1,200 candidates ≈ 10 ms), and the index needs
 * `1.2 × limit × population ÷ passing` candidates, so the scan is cheaper while
 * `passing² ≤ 1.6 × limit × population` (about 4,000 passing chunks at 100k, 12,600 at a million).
 */
const DRIVE_FACTOR = 1.6;
/**
 * {@link DRIVE_FACTOR} when the passing chunks' vectors are in memory or worth keeping there (see
 * `sqlite-passing-vectors.ts`): a chunk scanned there costs about 0.4–0.5 µs against about 8 µs a
 * candidate checked, so the scan stays cheaper while `passing² ≤ 20 × limit × population` (14,000
 * passing chunks of 100k at the service's 100 candidates, 44,000 of a million).
 */
const DRIVE_FACTOR_KEPT = 20;
/** Passing chunks that are always scanned exactly: a few milliseconds at most. */
const DRIVE_ALWAYS_AT_MOST = 2_000;

/** A vector query with what both of its paths need, checked once. */
interface VectorQuery {
  readonly limit: number;
  readonly vector: Float32Array;
  readonly model: IndexModel;
  readonly served: SqlPart;
  readonly conditions: SqlPart;
}

/**
 * The {@link ChunkIndex} role of the SQLite document store: chunk rows (with their vectors) and
 * search — for keywords the keyword index when one is configured and can answer exactly, else
 * FTS5 BM25; for vectors an exact sqlite-vec cosine scan, or the HNSW vector index when one is
 * configured and the query is large enough to need it.
 */
export function createSqliteChunkIndex(context: SqliteContext): ChunkIndex {
  const { db, run, write, readIndexModel, ann, annOptions, keywords, keywordOptions } = context;
  const indexedKeywordSearch =
    keywords === null ? null : createIndexedKeywordSearch(db, keywords, run, keywordOptions?.exactBelow ?? 0);
  const statements = {
    upsertChunk: db.prepare(
      `INSERT INTO chunks (id, document_id, version, workspace_id, idx, content, content_hash, tokens, start_offset,
         end_offset, page, metadata, vector, model)
       VALUES (@id, @document_id, @version, @workspace_id, @idx, @content, @content_hash, @tokens, @start_offset,
         @end_offset, @page, @metadata, @vector, @model)
       ON CONFLICT (id) DO UPDATE SET document_id = excluded.document_id, version = excluded.version,
         workspace_id = excluded.workspace_id, idx = excluded.idx, content = excluded.content,
         content_hash = excluded.content_hash, tokens = excluded.tokens, start_offset = excluded.start_offset,
         end_offset = excluded.end_offset, page = excluded.page, metadata = excluded.metadata,
         vector = excluded.vector, model = excluded.model`,
    ),
    copyChunks: db.prepare(
      `INSERT INTO chunks (id, document_id, version, workspace_id, idx, content, content_hash, tokens, start_offset,
         end_offset, page, metadata, vector, model)
       SELECT @prefix || idx, document_id, @to, workspace_id, idx, content, content_hash, tokens,
         start_offset, end_offset, page, metadata, vector, model
       FROM chunks WHERE document_id = @id AND version = @from ORDER BY idx
       ON CONFLICT (id) DO UPDATE SET document_id = excluded.document_id, version = excluded.version,
         workspace_id = excluded.workspace_id, idx = excluded.idx, content = excluded.content,
         content_hash = excluded.content_hash, tokens = excluded.tokens, start_offset = excluded.start_offset,
         end_offset = excluded.end_offset, page = excluded.page, metadata = excluded.metadata,
         vector = excluded.vector, model = excluded.model`,
    ),
    chunkPage: db.prepare<[string, number, number, number], ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? AND c.version = ? AND c.idx > ?
       ORDER BY c.idx LIMIT ?`,
    ),
    chunkCount: db.prepare<[string, number], { n: number }>(
      'SELECT count(*) AS n FROM chunks WHERE document_id = ? AND version = ?',
    ),
    chunkById: db.prepare<[string], ChunkRow>(`SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.id = ?`),
    vectorStats: db.prepare<[string | null, string, number], { total: number; missing: number }>(
      `SELECT count(*) AS total,
         coalesce(sum(CASE WHEN vector IS NULL OR model IS NOT ? THEN 1 ELSE 0 END), 0) AS missing
       FROM chunks WHERE document_id = ? AND version = ?`,
    ),
  };

  const passingVersions = createPassingVersions(db);
  const passingVectors = createPassingVectors(db);
  const workspaceChunks = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM chunks WHERE workspace_id = ?',
  );
  /** How many nearest chunks a vector query asks the index for (see `createCandidatePool`). */
  const vectorPool = createCandidatePool();
  /** Chunk counts by workspace, kept while the vector index's change cursor stays where it was. */
  const populations = new Map<string, { n: number; cursor: number }>();
  const workspacePopulation = (workspaceId: string, cursor: number): number => {
    const cached = populations.get(workspaceId);
    if (cached && cached.cursor === cursor) return cached.n;
    const n = workspaceChunks.get(workspaceId)?.n ?? 0;
    if (populations.size > 10_000) populations.clear();
    populations.set(workspaceId, { n, cursor });
    return n;
  };

  /** Keyword search by FTS5 BM25 over every matching chunk: the exact path. */
  function ftsSearch(query: StoreSearchQuery): SearchHit[] {
    const limit = Math.floor(query.limit);
    if (!(limit > 0)) return [];
    const served = servedAt(query.asOf);
    const conditions = searchConditions(query.workspaceId, query.filters);
    const match = ftsQuery(query.text);
    if (match === null) return [];
    const rows = db
      .prepare(
        `SELECT ${HIT_COLUMNS},
          -bm25(chunks_fts) AS score
        FROM chunks_fts
        JOIN chunks c ON c.seq = chunks_fts.rowid
        JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
        JOIN documents d ON d.id = c.document_id
        WHERE chunks_fts MATCH ? AND ${served.sql} AND ${conditions.sql}
        ORDER BY bm25(chunks_fts), c.id
        LIMIT ?`,
      )
      .all(match, ...served.params, ...conditions.params, limit) as KeywordRow[];
    return rows.map((row) => toSearchHit(row, row.score));
  }

  /**
   * A vector query checked once for both paths: its page, its vector against the index model, and
   * the served-interval and filter conditions. Null when there is nothing to search (no page, no
   * index model yet).
   */
  function checkedVectorQuery(query: StoreSearchQuery): VectorQuery | null {
    const limit = Math.floor(query.limit);
    if (!(limit > 0)) return null;
    const served = servedAt(query.asOf);
    const conditions = searchConditions(query.workspaceId, query.filters);
    const vector = query.vector;
    if (vector === undefined) throw new KbError('bad-request', 'Vector search needs a query vector');
    const model = readIndexModel();
    if (model === null) return null;
    requireIndexModel(model, vector, 'Query');
    return { limit, vector, model, served, conditions };
  }

  /** The exact vector query: a sqlite-vec cosine scan of every chunk that passes. */
  function exactVectorSearch(q: VectorQuery): VectorRow[] {
    return db
      .prepare(
        `SELECT * FROM (
          SELECT ${HIT_COLUMNS},
            vec_distance_cosine(c.vector, ?) AS distance
          FROM chunks c
          JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
          JOIN documents d ON d.id = c.document_id
          WHERE c.vector IS NOT NULL AND c.model = ? AND ${q.served.sql} AND ${q.conditions.sql}
        )
        WHERE distance IS NOT NULL
        ORDER BY distance, id
        LIMIT ?`,
      )
      .all(vectorBytes(q.vector), q.model.model, ...q.served.params, ...q.conditions.params, q.limit) as VectorRow[];
  }

  /**
   * The exact vector query driven from the passing versions: their chunks only, the nearest
   * `limit` by cosine — over their vectors kept in memory (read on the first scan of the plan), or
   * read by version in SQL when they are too many to keep — then those rows with the served
   * interval and filters checked again in SQL (the same conditions the versions were chosen by).
   */
  function drivenExactSearch(q: VectorQuery, passing: PassingVersions): VectorRow[] {
    const kept = passingVectors.nearest(passing, q.model.model, q.vector, q.limit);
    if (kept !== null) return checkedCandidates(q, kept);
    const nearest = db
      .prepare<unknown[], { seq: number }>(
        `SELECT seq FROM (
          SELECT c.seq AS seq, c.id AS id, vec_distance_cosine(c.vector, ?) AS distance
          FROM ${PASSING_CHUNKS}
          WHERE c.vector IS NOT NULL AND c.model = ?
        )
        WHERE distance IS NOT NULL
        ORDER BY distance, id
        LIMIT ?`,
      )
      .all(vectorBytes(q.vector), passing.json, q.model.model, q.limit);
    return checkedCandidates(
      q,
      nearest.map((row) => row.seq),
    );
  }

  /** The rows of candidate chunks `seqs` that pass the served interval and the filters, nearest first. */
  function checkedCandidates(q: VectorQuery, seqs: readonly number[]): VectorRow[] {
    return db
      .prepare(
        `SELECT ${HIT_COLUMNS},
          vec_distance_cosine(c.vector, ?) AS distance
        FROM chunks c
        JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
        JOIN documents d ON d.id = c.document_id
        WHERE c.seq IN (SELECT value FROM json_each(?)) AND c.vector IS NOT NULL AND c.model = ?
          AND ${q.served.sql} AND ${q.conditions.sql}
        ORDER BY distance, c.id`,
      )
      .all(
        vectorBytes(q.vector),
        JSON.stringify(seqs),
        q.model.model,
        ...q.served.params,
        ...q.conditions.params,
      ) as VectorRow[];
  }

  function toVectorHit(row: VectorRow): SearchHit {
    return toSearchHit(row, 1 - row.distance);
  }

  /**
   * The vector query through the HNSW index: the nearest `k` chunks of the whole index, then the
   * served-interval and filter conditions in SQL over just those, with exact cosine distances (so
   * scores equal the exact scan's). `k` starts at what the share of passing candidates seen in
   * queries of the same kind needs to leave `limit` matches (at first, twice the workspace's share
   * of the index) and grows fourfold while too few match and the index holds more.
   * Returns null — scan exactly — when there is no index (or it is being built in the background),
   * the filter names documents, the workspace is small, or growing `k` would visit a large part of the index anyway: a filtered
   * query never loses results that match.
   */
  async function approximateSearch(
    query: StoreSearchQuery,
    q: VectorQuery,
    passing: PassingVersions | null,
  ): Promise<VectorRow[] | null> {
    if (ann === null || annOptions === null) return null;
    if (query.filters.documentIds && query.filters.documentIds.length > 0) return null;
    const { size, population } = run(() => {
      const size = ann.sync(q.model);
      // Not ready (being built in the background): scan exactly.
      if (size === null) return { size: 0, population: 0 };
      return { size, population: workspacePopulation(query.workspaceId, ann.cursor()) };
    });
    if (size === 0 || population <= annOptions.exactBelow || size <= annOptions.exactBelow) return null;
    // Candidates of other workspaces are among the nearest too, in proportion to their size.
    // With the passing versions known, their chunks' share of the index is the expected share.
    const expected = passing === null ? undefined : passing.chunks / size;
    let k = Math.max(vectorPool.size(query, q.limit, population / size, expected), 100);
    for (;;) {
      // Visiting much of the index (a filter that keeps a small part of it): the exact scan costs
      // about the same and is exact, where the graph walk could still miss a match.
      if (k * 4 > size / 2) return null;
      const matches = await ann.search(q.vector, k);
      const rows = run(() => checkedCandidates(q, matches.seqs));
      vectorPool.observe(query, matches.seqs.length, rows.length);
      if (rows.length >= q.limit || !matches.more) return rows.slice(0, q.limit);
      k *= 4;
    }
  }

  return {
    async putChunks(chunks: readonly ChunkInput[]) {
      if (chunks.length === 0) return;
      write(() => {
        const model = readIndexModel();
        const rows = chunks.map((chunk) => {
          const vector = chunk.vector ?? null;
          if (vector !== null) requireIndexModel(model, vector, `Chunk ${chunk.id}`);
          const fields = toStoredChunkFields(chunk);
          return {
            ...fields,
            metadata: JSON.stringify(fields.metadata),
            vector: vector === null ? null : vectorBytes(vector),
            model: vector === null ? null : (model?.model ?? null),
          };
        });
        for (const row of rows) statements.upsertChunk.run(row);
      });
    },

    async copyChunks(documentId, fromVersion, toVersion) {
      return write(
        () =>
          statements.copyChunks.run({
            id: documentId,
            prefix: `${documentId}:${toVersion}:`,
            from: fromVersion,
            to: toVersion,
          }).changes,
      );
    },

    async listChunks(documentId, version, page) {
      return run(() => {
        const limit = Math.max(0, Math.floor(page.limit));
        const chunks =
          limit === 0 ? [] : statements.chunkPage.all(documentId, version, page.afterIndex, limit).map(toChunkRecord);
        return { chunks, total: statements.chunkCount.get(documentId, version)!.n };
      });
    },

    async getChunk(chunkId) {
      return run(() => {
        const row = statements.chunkById.get(chunkId);
        return row === undefined ? null : toChunkRecord(row);
      });
    },

    async deleteChunks(documentId, version) {
      write(() => context.statements.deleteChunks.run(documentId, version));
    },

    async hasVectors(documentId, version) {
      return run(() => {
        const model = readIndexModel();
        const stats = statements.vectorStats.get(model?.model ?? null, documentId, version)!;
        return model !== null && stats.total > 0 && stats.missing === 0;
      });
    },

    async keywordSearch(query) {
      const indexed = indexedKeywordSearch === null ? null : await indexedKeywordSearch(query);
      return indexed ?? run(() => ftsSearch(query));
    },

    async vectorSearch(query) {
      const checked = run(() => checkedVectorQuery(query));
      if (checked === null) return [];
      // A filter (or a look into the past) that few chunks pass: scan exactly the passing versions'
      // chunks; otherwise the vector index, knowing how many can pass (see docs/search.md).
      const passing = worthPlanning(query, vectorPool.share(query)) ? run(() => passingVersions(query)) : null;
      const factor =
        passing !== null && passingVectors.cheap(passing, checked.model.model, checked.vector.length)
          ? DRIVE_FACTOR_KEPT
          : DRIVE_FACTOR;
      const drive =
        passing !== null &&
        (ann === null ||
          passing.chunks <= DRIVE_ALWAYS_AT_MOST ||
          passing.chunks ** 2 <=
            factor * checked.limit * run(() => workspacePopulation(query.workspaceId, ann.cursor())));
      const rows =
        passing !== null && drive
          ? run(() => drivenExactSearch(checked, passing))
          : ((await approximateSearch(query, checked, passing)) ??
            run(() => (passing === null ? exactVectorSearch(checked) : drivenExactSearch(checked, passing))));
      return rows.map(toVectorHit);
    },
  };
}
