import type { Statement } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { KbError } from '../../errors/kb-error.ts';
import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import type {
  ChunkInput,
  DocumentListQuery,
  DocumentRecord,
  DocumentStore,
  IndexModel,
  NewDocument,
  NewVersion,
  SearchHit,
  StoreSearchQuery,
  VersionPatch,
  VersionRecord,
  VersionStatus,
} from './document-store.port.ts';
import { VERSION_STATUSES } from './document-store.port.ts';
import {
  CHUNK_COLUMNS,
  type ChunkRow,
  DOCUMENT_COLUMNS,
  type DocumentRow,
  toChunkRecord,
  toDocumentRecord,
  toVersionRecord,
  type VersionRow,
} from './sqlite-rows.ts';
import { DOCUMENT_STORE_MIGRATIONS } from './sqlite-schema.ts';
import { ftsQuery, searchConditions, servedAt } from './sqlite-search.ts';
import { createVectorIndex, type VectorIndex } from './sqlite-vector-index.ts';
import {
  bytesToVector,
  canonicalTime,
  requireIndexModel,
  toStoredChunkFields,
  toStoredProgress,
  vectorBytes,
} from './stored-records.ts';

export interface SqliteDocumentStoreOptions {
  /** Database file (created with its directory if missing), or `:memory:`. */
  readonly file: string;
  /**
   * The approximate (HNSW) vector index; absent or null: every vector query is an exact scan.
   * `exactBelow`: a query whose workspace holds at most this many chunks scans them exactly.
   * `expansionSearch`: the index's query beam width.
   */
  readonly vectorIndex?: {
    readonly exactBelow: number;
    readonly expansionSearch: number;
    readonly log?: (message: string) => void;
  } | null;
}

interface SearchRow extends ChunkRow {
  readonly v_name: string;
  readonly v_metadata: string;
  readonly v_mime_type: string;
  readonly score: number;
}

const INDEX_MODEL_KEY = 'index_model';

/** Most parameters bound in one `IN (...)` list of the vector cache lookup. */
const LOOKUP_BATCH = 500;

/** SQLite result codes that mean "another writer holds the lock": retrying may succeed. */
const BUSY_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED']);

function later(first: string, second: string | null): string {
  return second !== null && second > first ? second : first;
}

/**
 * The embedded runtime's {@link DocumentStore}: SQLite with FTS5 (BM25 keyword search) and
 * sqlite-vec (exact cosine vector search over the served chunks), in one database file that
 * several processes may share (WAL; every read-modify-write runs in an IMMEDIATE transaction).
 *
 * Adapter decisions beyond the port's contract:
 * - Timestamps are stored in canonical form (`Date#toISOString`): a record returns
 *   `2024-01-01T00:00:00.000Z` for an input of `2024-01-01T00:00:00Z`. Unparseable timestamps
 *   reject with `bad-request`.
 * - Served intervals stay ordered even with clock skew between processes: a completion or
 *   deletion `at` earlier than the served version's `servedFrom` is moved up to it.
 * - `putChunks` tags vectors with the index model current at write time (the port's
 *   `ChunkInput` carries no model); it checks their dimensions and that an index model is set.
 * - `completeVersion` of a missing version resolves `{served: false}` (a late event of a purged
 *   document); `hasVectors` of a version without chunks is false (nothing to reuse).
 * - `archiveVersion` refuses (`conflict`) to archive the version search serves now.
 * - Keyword search ORs the words of the text (porter-stemmed, diacritics folded); the score is
 *   the negated FTS5 `bm25()`, higher is better.
 */
export function createSqliteDocumentStore(options: SqliteDocumentStoreOptions): DocumentStore {
  const db: Database = openDatabase(options.file);
  try {
    sqliteVec.load(db);
    for (const migration of DOCUMENT_STORE_MIGRATIONS) migrate(db, migration.name, migration.statements);
  } catch (error) {
    db.close();
    throw error;
  }

  const statements = {
    documentById: db.prepare<[string, string], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents d
       JOIN versions v ON v.document_id = d.id AND v.version = d.latest_version
       WHERE d.id = ? AND d.workspace_id = ?`,
    ),
    documentMeta: db.prepare<
      [string],
      { workspace_id: string; deleted_at: string | null; latest_version: number; served_version: number | null }
    >('SELECT workspace_id, deleted_at, latest_version, served_version FROM documents WHERE id = ?'),
    insertDocument: db.prepare(
      `INSERT INTO documents (id, workspace_id, source, created_at, updated_at, deleted_at, latest_version,
         served_version, status, name)
       VALUES (@id, @workspace_id, @source, @created_at, @created_at, NULL, 1, NULL, 'pending', @name)`,
    ),
    insertVersion: db.prepare(
      `INSERT INTO versions (document_id, version, workspace_id, status, name, mime_type, size_bytes, content_hash,
         storage_key, metadata, change_reason, restored_from, created_by, created_at)
       VALUES (@document_id, @version, @workspace_id, 'pending', @name, @mime_type, @size_bytes, @content_hash,
         @storage_key, @metadata, @change_reason, @restored_from, @created_by, @created_at)`,
    ),
    bumpLatest: db.prepare(
      `UPDATE documents SET latest_version = @version, status = 'pending', name = @name, updated_at = @at
       WHERE id = @id`,
    ),
    version: db.prepare<[string, number], VersionRow>('SELECT * FROM versions WHERE document_id = ? AND version = ?'),
    versionsOf: db.prepare<[string, string], VersionRow>(
      'SELECT * FROM versions WHERE document_id = ? AND workspace_id = ? ORDER BY version DESC',
    ),
    setDocumentStatus: db.prepare(
      'UPDATE documents SET status = @status, updated_at = @at WHERE id = @id AND latest_version = @version',
    ),
    markCompleted: db.prepare(
      `UPDATE versions SET status = 'completed', completed_at = @at, chunk_count = @chunk_count, tokens = @tokens,
         embedding_model = @embedding_model, error = NULL
       WHERE document_id = @id AND version = @version`,
    ),
    endServing: db.prepare(
      'UPDATE versions SET served_until = @at WHERE document_id = @id AND version = @version AND served_until IS NULL',
    ),
    startServing: db.prepare(
      'UPDATE versions SET served_from = @at, served_until = NULL WHERE document_id = @id AND version = @version',
    ),
    setServedVersion: db.prepare('UPDATE documents SET served_version = @version WHERE id = @id'),
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
    deleteChunks: db.prepare('DELETE FROM chunks WHERE document_id = ? AND version = ?'),
    vectorStats: db.prepare<[string | null, string, number], { total: number; missing: number }>(
      `SELECT count(*) AS total,
         coalesce(sum(CASE WHEN vector IS NULL OR model IS NOT ? THEN 1 ELSE 0 END), 0) AS missing
       FROM chunks WHERE document_id = ? AND version = ?`,
    ),
    anyVector: db.prepare<[], { one: number }>('SELECT 1 AS one FROM chunks WHERE vector IS NOT NULL LIMIT 1'),
    dropVectors: db.prepare(
      'UPDATE chunks SET vector = NULL, model = NULL WHERE vector IS NOT NULL OR model IS NOT NULL',
    ),
    metaGet: db.prepare<[string], { value: string }>('SELECT value FROM store_meta WHERE key = ?'),
    metaPut: db.prepare(
      'INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    scanChunks: db.prepare<[string, number], ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?`,
    ),
    setChunkVector: db.prepare('UPDATE chunks SET vector = ?, model = ? WHERE id = ?'),
    putCachedVector: db.prepare(
      `INSERT INTO vector_cache (model, content_hash, vector) VALUES (?, ?, ?)
       ON CONFLICT (model, content_hash) DO UPDATE SET vector = excluded.vector`,
    ),
    softDelete: db.prepare(
      'UPDATE documents SET deleted_at = @at, updated_at = @at, served_version = NULL WHERE id = @id',
    ),
    purgeChunks: db.prepare('DELETE FROM chunks WHERE document_id = ?'),
    purgeVersions: db.prepare('DELETE FROM versions WHERE document_id = ?'),
    purgeDocument: db.prepare('DELETE FROM documents WHERE id = ? AND workspace_id = ?'),
    expiredVersions: db.prepare<[string, string], VersionRow>(
      `SELECT * FROM versions
       WHERE workspace_id = ? AND served_until IS NOT NULL AND served_until < ? AND archived_at IS NULL
       ORDER BY served_until, document_id, version`,
    ),
    markArchived: db.prepare(
      'UPDATE versions SET archived_at = @at WHERE document_id = @id AND version = @version AND archived_at IS NULL',
    ),
    archivedHorizon: db.prepare<[string], { horizon: string | null }>(
      'SELECT max(served_until) AS horizon FROM versions WHERE workspace_id = ? AND archived_at IS NOT NULL',
    ),
    workspaces: db.prepare<[], { workspace_id: string }>(
      'SELECT DISTINCT workspace_id FROM documents ORDER BY workspace_id',
    ),
    statusCounts: db.prepare<[], { status: VersionStatus; n: number }>(
      'SELECT status, count(*) AS n FROM documents WHERE deleted_at IS NULL GROUP BY status',
    ),
    ping: db.prepare('SELECT 1'),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };

  let closed = false;
  const annOptions = options.vectorIndex ?? null;
  const ann: VectorIndex | null =
    annOptions === null
      ? null
      : createVectorIndex(db, {
          file: options.file === ':memory:' ? null : options.file,
          expansionSearch: annOptions.expansionSearch,
          ...(annOptions.log ? { log: annOptions.log } : {}),
        });
  if (ann === null) {
    // Nothing here follows the change log; keep it bounded (another process with the index that
    // falls this far behind rebuilds its index).
    db.prepare('DELETE FROM vector_changes WHERE id <= (SELECT max(id) - 100000 FROM vector_changes)').run();
  }
  const workspaceChunks = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM chunks WHERE workspace_id = ?',
  );
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

  /** Runs `body`, turning SQLite lock contention into a retriable `engine-unavailable`. */
  function run<T>(body: () => T): T {
    try {
      return body();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && BUSY_CODES.has(code)) {
        throw new KbError('engine-unavailable', 'The document database is busy', { cause: error, retriable: true });
      }
      throw error;
    }
  }

  /** Transactions this connection committed (or tried to): one half of {@link DocumentStore.changeMark}. */
  let writes = 0;

  /** Runs `body` in an IMMEDIATE transaction (takes the write lock first, so no upgrade deadlocks). */
  function write<T>(body: () => T): T {
    try {
      return run(() => db.transaction(body).immediate());
    } finally {
      writes += 1;
    }
  }

  /** List statements by their SQL: the filters combine into a few shapes, each prepared once. */
  const listStatements = new Map<string, Statement>();
  function listStatement(sql: string): Statement {
    let statement = listStatements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      listStatements.set(sql, statement);
    }
    return statement;
  }

  function readIndexModel(): IndexModel | null {
    const row = statements.metaGet.get(INDEX_MODEL_KEY);
    return row === undefined ? null : (JSON.parse(row.value) as IndexModel);
  }

  function versionRow(documentId: string, version: number): VersionRow | undefined {
    return statements.version.get(documentId, version);
  }

  function versionParams(documentId: string, workspaceId: string, version: number, input: NewVersion) {
    return {
      document_id: documentId,
      version,
      workspace_id: workspaceId,
      name: input.name,
      mime_type: input.mimeType,
      size_bytes: input.sizeBytes,
      content_hash: input.contentHash,
      storage_key: input.storageKey,
      metadata: JSON.stringify(input.metadata ?? {}),
      change_reason: input.changeReason,
      restored_from: input.restoredFrom,
      created_by: input.createdBy,
      created_at: canonicalTime(input.createdAt, 'createdAt'),
    };
  }

  function search(query: StoreSearchQuery, kind: 'keyword' | 'vector'): SearchHit[] {
    const limit = Math.floor(query.limit);
    if (!(limit > 0)) return [];
    const served = servedAt(query.asOf);
    const conditions = searchConditions(query.workspaceId, query.filters);
    let sql: string;
    let params: unknown[];
    if (kind === 'keyword') {
      const match = ftsQuery(query.text);
      if (match === null) return [];
      sql = `SELECT ${CHUNK_COLUMNS}, v.name AS v_name, v.metadata AS v_metadata, v.mime_type AS v_mime_type,
          -bm25(chunks_fts) AS score
        FROM chunks_fts
        JOIN chunks c ON c.seq = chunks_fts.rowid
        JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
        JOIN documents d ON d.id = c.document_id
        WHERE chunks_fts MATCH ? AND ${served.sql} AND ${conditions.sql}
        ORDER BY bm25(chunks_fts), c.id
        LIMIT ?`;
      params = [match, ...served.params, ...conditions.params, limit];
    } else {
      const vector = query.vector;
      if (vector === undefined) throw new KbError('bad-request', 'Vector search needs a query vector');
      const model = readIndexModel();
      if (model === null) return [];
      requireIndexModel(model, vector, 'Query');
      const approximate = approximateSearch(query, model, vector, served, conditions, limit);
      if (approximate !== null) return approximate.map(toVectorHit);
      sql = `SELECT * FROM (
          SELECT ${CHUNK_COLUMNS}, v.name AS v_name, v.metadata AS v_metadata, v.mime_type AS v_mime_type,
            vec_distance_cosine(c.vector, ?) AS distance
          FROM chunks c
          JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
          JOIN documents d ON d.id = c.document_id
          WHERE c.vector IS NOT NULL AND c.model = ? AND ${served.sql} AND ${conditions.sql}
        )
        WHERE distance IS NOT NULL
        ORDER BY distance, id
        LIMIT ?`;
      params = [vectorBytes(vector), model.model, ...served.params, ...conditions.params, limit];
    }
    const rows = db.prepare(sql).all(...params) as (SearchRow & { distance?: number })[];
    return kind === 'keyword'
      ? rows.map((row) => ({
          chunk: toChunkRecord(row),
          score: row.score,
          documentName: row.v_name,
          documentMetadata: JSON.parse(row.v_metadata) as Record<string, unknown>,
          mimeType: row.v_mime_type,
        }))
      : rows.map(toVectorHit);
  }

  function toVectorHit(row: SearchRow & { distance?: number }): SearchHit {
    return {
      chunk: toChunkRecord(row),
      score: 1 - (row.distance ?? 1),
      documentName: row.v_name,
      documentMetadata: JSON.parse(row.v_metadata) as Record<string, unknown>,
      mimeType: row.v_mime_type,
    };
  }

  /**
   * The vector query through the HNSW index: the nearest `k` chunks of the whole index, then the
   * served-interval and filter conditions in SQL over just those, with exact cosine distances (so
   * scores equal the exact scan's). `k` starts at what the workspace's share of the index needs to
   * leave `limit` matches and grows fourfold while too few match and the index holds more.
   * Returns null — scan exactly — when there is no index, the filter names documents, the
   * workspace is small, or growing `k` would visit a large part of the index anyway: a filtered
   * query never loses results that match.
   */
  function approximateSearch(
    query: StoreSearchQuery,
    model: IndexModel,
    vector: Float32Array,
    served: { sql: string; params: unknown[] },
    conditions: { sql: string; params: unknown[] },
    limit: number,
  ): (SearchRow & { distance: number })[] | null {
    if (ann === null || annOptions === null) return null;
    if (query.filters.documentIds && query.filters.documentIds.length > 0) return null;
    const size = ann.sync(model);
    const population = workspacePopulation(query.workspaceId, ann.cursor());
    if (population <= annOptions.exactBelow || size <= annOptions.exactBelow) return null;
    let k = Math.max(limit * 2, Math.ceil((limit * 2 * size) / population), 100);
    const statement = db.prepare(
      `SELECT ${CHUNK_COLUMNS}, v.name AS v_name, v.metadata AS v_metadata, v.mime_type AS v_mime_type,
          vec_distance_cosine(c.vector, ?) AS distance
        FROM chunks c
        JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
        JOIN documents d ON d.id = c.document_id
        WHERE c.seq IN (SELECT value FROM json_each(?)) AND c.vector IS NOT NULL AND c.model = ?
          AND ${served.sql} AND ${conditions.sql}
        ORDER BY distance, c.id
        LIMIT ?`,
    );
    for (;;) {
      // Visiting much of the index (a filter that keeps a small part of it): the exact scan costs
      // about the same and is exact, where the graph walk could still miss a match.
      if (k * 4 > size / 2) return null;
      const matches = ann.search(vector, k);
      const rows = statement.all(
        vectorBytes(vector),
        JSON.stringify(matches.seqs),
        model.model,
        ...served.params,
        ...conditions.params,
        limit,
      ) as (SearchRow & { distance: number })[];
      if (rows.length >= limit || !matches.more) return rows;
      k *= 4;
    }
  }

  function listDocuments(query: DocumentListQuery): { documents: DocumentRecord[]; total: number } {
    const conditions = ['d.workspace_id = ?', 'd.deleted_at IS NULL'];
    const params: unknown[] = [query.workspaceId];
    if (query.status !== undefined) {
      conditions.push('d.status = ?');
      params.push(query.status);
    }
    if (query.source !== undefined) {
      conditions.push('d.source = ?');
      params.push(query.source);
    }
    if (query.createdAfter !== undefined) {
      conditions.push('d.created_at >= ?');
      params.push(canonicalTime(query.createdAfter, 'createdAfter'));
    }
    if (query.createdBefore !== undefined) {
      conditions.push('d.created_at < ?');
      params.push(canonicalTime(query.createdBefore, 'createdBefore'));
    }
    const filter = conditions.join(' AND ');
    const total =
      query.knownTotal ??
      (listStatement(`SELECT count(*) AS n FROM documents d WHERE ${filter}`).get(...params) as { n: number }).n;
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return { documents: [], total };
    const pageConditions = [filter];
    const pageParams = [...params];
    if (query.after !== undefined) {
      const createdAt = canonicalTime(query.after.createdAt, 'after.createdAt');
      pageConditions.push('(d.created_at < ? OR (d.created_at = ? AND d.id < ?))');
      pageParams.push(createdAt, createdAt, query.after.id);
    }
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    const rows = listStatement(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents d
       JOIN versions v ON v.document_id = d.id AND v.version = d.latest_version
       WHERE ${pageConditions.join(' AND ')}
       ORDER BY d.created_at DESC, d.id DESC
       LIMIT ? OFFSET ?`,
    ).all(...pageParams, limit, offset) as DocumentRow[];
    return { documents: rows.map(toDocumentRecord), total };
  }

  return {
    kind: 'sqlite',

    async createDocument(input: NewDocument): Promise<DocumentRecord> {
      const version = versionParams(input.id, input.workspaceId, 1, input.firstVersion);
      return write(() => {
        if (statements.documentMeta.get(input.id) !== undefined) {
          throw new KbError('conflict', `Document ${input.id} already exists`, { retriable: false });
        }
        statements.insertDocument.run({
          id: input.id,
          workspace_id: input.workspaceId,
          source: input.source,
          created_at: version.created_at,
          name: version.name,
        });
        statements.insertVersion.run(version);
        return toDocumentRecord(statements.documentById.get(input.id, input.workspaceId)!);
      });
    },

    async appendVersion(workspaceId, documentId, build): Promise<VersionRecord> {
      return write(() => {
        const document = statements.documentMeta.get(documentId);
        if (document === undefined || document.workspace_id !== workspaceId || document.deleted_at !== null) {
          throw new KbError('not-found', `Document ${documentId} not found`);
        }
        const latest = versionRow(documentId, document.latest_version);
        if (latest === undefined) throw new KbError('not-found', `Document ${documentId} has no versions`);
        const next = document.latest_version + 1;
        const params = versionParams(documentId, workspaceId, next, build(toVersionRecord(latest)));
        statements.insertVersion.run(params);
        statements.bumpLatest.run({ id: documentId, version: next, name: params.name, at: params.created_at });
        return toVersionRecord(versionRow(documentId, next)!);
      });
    },

    async getDocument(workspaceId, documentId) {
      return run(() => {
        const row = statements.documentById.get(documentId, workspaceId);
        return row === undefined || row.d_deleted_at !== null ? null : toDocumentRecord(row);
      });
    },

    async listDocuments(query) {
      return run(() => listDocuments(query));
    },

    changeMark() {
      // This connection's own writes, and `data_version`, which moves when another connection
      // (another process sharing the file) commits.
      return `${writes}.${run(() => statements.dataVersion.get())}`;
    },

    async listVersions(workspaceId, documentId) {
      return run(() => statements.versionsOf.all(documentId, workspaceId).map(toVersionRecord));
    },

    async getVersion(documentId, version) {
      return run(() => {
        const row = versionRow(documentId, version);
        return row === undefined ? null : toVersionRecord(row);
      });
    },

    async updateVersion(documentId, version, patch: VersionPatch) {
      return write(() => {
        const row = versionRow(documentId, version);
        if (row === undefined) return null;
        const sets: string[] = [];
        const params: Record<string, unknown> = { id: documentId, version };
        if (patch.status !== undefined) {
          sets.push('status = @status');
          params.status = patch.status;
        }
        if (patch.error !== undefined) {
          sets.push('error = @error');
          params.error = patch.error === null ? null : JSON.stringify(patch.error);
        }
        if (patch.progress !== undefined) {
          sets.push('progress = @progress');
          params.progress = patch.progress === null ? null : JSON.stringify(toStoredProgress(patch.progress));
        }
        if (patch.chunkCount !== undefined) {
          sets.push('chunk_count = @chunk_count');
          params.chunk_count = patch.chunkCount;
        }
        if (patch.tokens !== undefined) {
          sets.push('tokens = @tokens');
          params.tokens = patch.tokens;
        }
        if (patch.embeddingModel !== undefined) {
          sets.push('embedding_model = @embedding_model');
          params.embedding_model = patch.embeddingModel;
        }
        if (sets.length > 0) {
          db.prepare(`UPDATE versions SET ${sets.join(', ')} WHERE document_id = @id AND version = @version`).run(
            params,
          );
        }
        if (patch.status !== undefined && patch.status !== row.status) {
          statements.setDocumentStatus.run({
            id: documentId,
            version,
            status: patch.status,
            at: new Date().toISOString(),
          });
        }
        return toVersionRecord(versionRow(documentId, version)!);
      });
    },

    async completeVersion(documentId, version, result) {
      const at = canonicalTime(result.at, 'at');
      return write(() => {
        const row = versionRow(documentId, version);
        const document = statements.documentMeta.get(documentId);
        if (row === undefined || document === undefined) return { served: false };
        if (row.status === 'completed') return { served: row.served_from !== null };
        statements.markCompleted.run({
          id: documentId,
          version,
          at,
          chunk_count: result.chunkCount,
          tokens: result.tokens,
          embedding_model: result.embeddingModel,
        });
        let served = false;
        if (document.deleted_at === null) {
          if (document.served_version === version) {
            served = true;
          } else if (document.served_version === null || document.served_version < version) {
            const previous =
              document.served_version === null ? undefined : versionRow(documentId, document.served_version);
            const from = later(at, previous?.served_from ?? null);
            if (previous !== undefined) {
              statements.endServing.run({ id: documentId, version: previous.version, at: from });
            }
            statements.startServing.run({ id: documentId, version, at: from });
            statements.setServedVersion.run({ id: documentId, version });
            served = true;
          }
        }
        statements.setDocumentStatus.run({ id: documentId, version, status: 'completed', at });
        return { served };
      });
    },

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
      write(() => statements.deleteChunks.run(documentId, version));
    },

    async hasVectors(documentId, version) {
      return run(() => {
        const model = readIndexModel();
        const stats = statements.vectorStats.get(model?.model ?? null, documentId, version)!;
        return model !== null && stats.total > 0 && stats.missing === 0;
      });
    },

    async getIndexModel() {
      return run(readIndexModel);
    },

    async setIndexModel(model: IndexModel, setOptions?: { replace?: boolean }) {
      if (model.model.length === 0 || !Number.isInteger(model.dimensions) || model.dimensions <= 0) {
        throw new KbError('bad-request', `Invalid index model ${JSON.stringify(model)}`);
      }
      write(() => {
        const current = readIndexModel();
        if (current !== null && current.model === model.model && current.dimensions === model.dimensions) return;
        if (current !== null && statements.anyVector.get() !== undefined) {
          if (setOptions?.replace !== true) {
            throw new KbError(
              'model-mismatch',
              `The index holds vectors of ${current.model} (${current.dimensions} dimensions); ` +
                `switching to ${model.model} (${model.dimensions}) needs replace`,
            );
          }
          statements.dropVectors.run();
        }
        statements.metaPut.run(
          INDEX_MODEL_KEY,
          JSON.stringify({ model: model.model, dimensions: model.dimensions } satisfies IndexModel),
        );
      });
    },

    async scanChunks(page) {
      return run(() => statements.scanChunks.all(page.afterId, Math.max(0, Math.floor(page.limit))).map(toChunkRecord));
    },

    async setChunkVectors(model, vectors) {
      if (vectors.size === 0) return;
      write(() => {
        const index = readIndexModel();
        if (index === null || index.model !== model) {
          throw new KbError('model-mismatch', `Vectors of ${model} do not belong to the index model ${index?.model}`);
        }
        for (const [chunkId, vector] of vectors) requireIndexModel(index, vector, `Chunk ${chunkId}`);
        for (const [chunkId, vector] of vectors) statements.setChunkVector.run(vectorBytes(vector), model, chunkId);
      });
    },

    async getCachedVectors(model, contentHashes) {
      return run(() => {
        const found = new Map<string, Float32Array>();
        const unique = [...new Set(contentHashes)];
        for (let start = 0; start < unique.length; start += LOOKUP_BATCH) {
          const batch = unique.slice(start, start + LOOKUP_BATCH);
          const rows = db
            .prepare(
              `SELECT content_hash, vector FROM vector_cache
               WHERE model = ? AND content_hash IN (${batch.map(() => '?').join(', ')})`,
            )
            .all(model, ...batch) as { content_hash: string; vector: Buffer }[];
          for (const row of rows) found.set(row.content_hash, bytesToVector(row.vector));
        }
        return found;
      });
    },

    async putCachedVectors(model, vectors) {
      if (vectors.size === 0) return;
      write(() => {
        for (const [hash, vector] of vectors) statements.putCachedVector.run(model, hash, vectorBytes(vector));
      });
    },

    async keywordSearch(query) {
      return run(() => search(query, 'keyword'));
    },

    async vectorSearch(query) {
      return run(() => search(query, 'vector'));
    },

    async softDelete(workspaceId, documentId, at) {
      const when = canonicalTime(at, 'at');
      return write(() => {
        const document = statements.documentMeta.get(documentId);
        if (document === undefined || document.workspace_id !== workspaceId || document.deleted_at !== null) {
          return null;
        }
        if (document.served_version !== null) {
          const served = versionRow(documentId, document.served_version);
          statements.endServing.run({
            id: documentId,
            version: document.served_version,
            at: later(when, served?.served_from ?? null),
          });
        }
        statements.softDelete.run({ id: documentId, at: when });
        return toDocumentRecord(statements.documentById.get(documentId, workspaceId)!);
      });
    },

    async purge(workspaceId, documentId) {
      return write(() => {
        const document = statements.documentMeta.get(documentId);
        if (document === undefined || document.workspace_id !== workspaceId) return false;
        statements.purgeChunks.run(documentId);
        statements.purgeVersions.run(documentId);
        statements.purgeDocument.run(documentId, workspaceId);
        return true;
      });
    },

    async listExpiredVersions(workspaceId, cutoff) {
      const before = canonicalTime(cutoff, 'cutoff');
      return run(() => statements.expiredVersions.all(workspaceId, before).map(toVersionRecord));
    },

    async archiveVersion(documentId, version, at) {
      const when = canonicalTime(at, 'at');
      write(() => {
        const row = versionRow(documentId, version);
        if (row === undefined) return;
        if (row.served_from !== null && row.served_until === null) {
          throw new KbError('conflict', `Version ${version} of ${documentId} is served now and cannot be archived`, {
            retriable: false,
          });
        }
        statements.deleteChunks.run(documentId, version);
        statements.markArchived.run({ id: documentId, version, at: when });
      });
    },

    async archivedHorizon(workspaceId) {
      return run(() => statements.archivedHorizon.get(workspaceId)?.horizon ?? null);
    },

    async listWorkspaces() {
      return run(() => statements.workspaces.all().map((row) => row.workspace_id));
    },

    async countDocumentsByStatus() {
      const counts = Object.fromEntries(VERSION_STATUSES.map((s) => [s, 0])) as Record<VersionStatus, number>;
      for (const row of run(() => statements.statusCounts.all())) counts[row.status] = row.n;
      return counts;
    },

    async ping() {
      run(() => statements.ping.get());
    },

    async close() {
      if (closed) return;
      closed = true;
      ann?.close();
      db.close();
    },
  };
}
