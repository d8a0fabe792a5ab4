import * as sqliteVec from 'sqlite-vec';
import { engineUnavailable } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import { type Database, migrate, openDatabase } from '../../sqlite/open-database.ts';
import { createKeywordIndex, type KeywordIndex } from './sqlite-keyword-index.ts';
import type { VersionRow } from './sqlite-rows.ts';
import { DOCUMENT_STORE_MIGRATIONS } from './sqlite-schema.ts';
import { createVectorIndex, type VectorIndex, type VectorQuantization } from './sqlite-vector-index.ts';

export interface SqliteDocumentStoreOptions {
  /** Database file (created with its directory if missing), or `:memory:`. */
  readonly file: string;
  /**
   * The approximate (HNSW) vector index; absent or null: every vector query is an exact scan.
   * `exactBelow`: a query whose workspace holds at most this many chunks scans them exactly.
   * `expansionSearch`: the index's query beam width; `quantization`: how it stores vectors (`i8`).
   */
  readonly vectorIndex?: VectorIndexSettings | null;
  /**
   * The keyword index (LanceDB full-text, kept beside the database file as `<file>.keywords/`);
   * absent or null, or a `:memory:` database: every keyword query is an exact FTS5 query.
   */
  readonly keywordIndex?: KeywordIndexSettings | null;
}

export interface KeywordIndexSettings {
  /** Largest backlog of changes (or rebuild, in chunks) applied before a query rather than in the background. */
  readonly syncBelow: number;
  /** A database with fewer chunks than this answers keyword queries exactly on FTS5 (default 0: never). */
  readonly exactBelow?: number;
  /** Threads of LanceDB's compute pool, at least 2 (default 2). */
  readonly threads?: number;
  /** Open the index at once and follow new changes in the background (the process that answers queries). */
  readonly follow?: boolean;
  readonly log?: (message: string) => void;
}

export interface VectorIndexSettings {
  readonly exactBelow: number;
  readonly expansionSearch: number;
  readonly quantization?: VectorQuantization;
  /** Largest rebuild (in vectors) run before a query rather than in a worker thread (default 5,000). */
  readonly syncBelow?: number;
  /**
   * Open the index at once (load it, or start its build) rather than at the first vector query (the
   * process that answers queries).
   */
  readonly openAtStart?: boolean;
  readonly log?: (message: string) => void;
}

/** Key of the index model in `store_meta`. */
export const INDEX_MODEL_KEY = 'index_model';

/** SQLite result codes that mean "another writer holds the lock": retrying may succeed. */
const BUSY_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED']);

/**
 * What the roles of one SQLite document store share: the connection, the statements more than
 * one role runs, the lock-contention and transaction wrappers, and the vector index.
 */
export interface SqliteContext {
  readonly db: Database;
  readonly statements: SharedStatements;
  /** The approximate vector index, or null (every vector query is an exact scan). */
  readonly ann: VectorIndex | null;
  readonly annOptions: VectorIndexSettings | null;
  /** The keyword index, or null (every keyword query is an exact FTS5 query). */
  readonly keywords: KeywordIndex | null;
  readonly keywordOptions: KeywordIndexSettings | null;
  /** Runs `body`, turning SQLite lock contention into a retriable `engine-unavailable`. */
  run<T>(body: () => T): T;
  /** Runs `body` in an IMMEDIATE transaction (takes the write lock first, so no upgrade deadlocks). */
  write<T>(body: () => T): T;
  /** Transactions this connection committed (or tried to): one half of the change mark. */
  writes(): number;
  readIndexModel(): IndexModel | null;
  versionRow(documentId: string, version: number): VersionRow | undefined;
  /** Closes the keyword index, the vector index and the connection; calling it again changes nothing. */
  close(): Promise<void>;
}

type SharedStatements = ReturnType<typeof prepareShared>;

function prepareShared(db: Database) {
  return {
    version: db.prepare<[string, number], VersionRow>('SELECT * FROM versions WHERE document_id = ? AND version = ?'),
    deleteChunks: db.prepare('DELETE FROM chunks WHERE document_id = ? AND version = ?'),
    metaGet: db.prepare<[string], { value: string }>('SELECT value FROM store_meta WHERE key = ?'),
    ping: db.prepare('SELECT 1'),
  };
}

/**
 * Opens the database file (loading sqlite-vec and applying the migrations), prepares the shared
 * statements and opens the vector index when one is configured.
 */
export function openSqliteContext(options: SqliteDocumentStoreOptions): SqliteContext {
  const db: Database = openDatabase(options.file);
  try {
    sqliteVec.load(db);
    for (const migration of DOCUMENT_STORE_MIGRATIONS) migrate(db, migration.name, migration.statements);
  } catch (error) {
    db.close();
    throw error;
  }

  const statements = prepareShared(db);

  let closed = false;
  const annOptions = options.vectorIndex ?? null;
  const ann: VectorIndex | null =
    annOptions === null
      ? null
      : createVectorIndex(db, {
          file: options.file === ':memory:' ? null : options.file,
          expansionSearch: annOptions.expansionSearch,
          ...(annOptions.quantization ? { quantization: annOptions.quantization } : {}),
          ...(annOptions.syncBelow !== undefined ? { syncBelow: annOptions.syncBelow } : {}),
          ...(annOptions.log ? { log: annOptions.log } : {}),
        });
  if (ann !== null && annOptions?.openAtStart) {
    setImmediate(() => {
      if (closed) return;
      try {
        ann.sync(readIndexModel());
      } catch (error) {
        annOptions.log?.(
          `vector index: could not be opened at start, it is opened at the first vector query: ${String(error)}`,
        );
      }
    });
  }
  if (ann === null) {
    // Nothing here follows the change log; keep it bounded (another process with the index that
    // falls this far behind rebuilds its index).
    db.prepare('DELETE FROM vector_changes WHERE id <= (SELECT max(id) - 100000 FROM vector_changes)').run();
  }
  const keywordOptions = options.file === ':memory:' ? null : (options.keywordIndex ?? null);
  const keywords: KeywordIndex | null =
    keywordOptions === null
      ? null
      : createKeywordIndex(db, {
          dir: `${options.file}.keywords`,
          syncBelow: keywordOptions.syncBelow,
          threads: keywordOptions.threads ?? 2,
          follow: keywordOptions.follow ?? false,
          ...(keywordOptions.log ? { log: keywordOptions.log } : {}),
        });
  if (keywords === null) {
    // The same bound for the keyword index's log.
    db.prepare('DELETE FROM keyword_changes WHERE id <= (SELECT max(id) - 100000 FROM keyword_changes)').run();
  }

  function run<T>(body: () => T): T {
    try {
      return body();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && BUSY_CODES.has(code)) {
        throw engineUnavailable('SQLite', 'The document database is busy', error);
      }
      throw error;
    }
  }

  let writes = 0;

  function write<T>(body: () => T): T {
    try {
      return run(() => db.transaction(body).immediate());
    } finally {
      writes += 1;
    }
  }

  function readIndexModel(): IndexModel | null {
    const row = statements.metaGet.get(INDEX_MODEL_KEY);
    return row === undefined ? null : (JSON.parse(row.value) as IndexModel);
  }

  function versionRow(documentId: string, version: number): VersionRow | undefined {
    return statements.version.get(documentId, version);
  }

  return {
    db,
    statements,
    ann,
    annOptions,
    keywords,
    keywordOptions,
    run,
    write,
    writes: () => writes,
    readIndexModel,
    versionRow,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await keywords?.close();
      } finally {
        try {
          await ann?.close();
        } finally {
          db.close();
        }
      }
    },
  };
}
