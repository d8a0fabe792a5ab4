import type { DocumentStore } from './document-store.port.ts';
import { createSqliteChunkIndex } from './sqlite/sqlite-chunks.ts';
import { openSqliteContext, type SqliteDocumentStoreOptions } from './sqlite/sqlite-context.ts';
import { createSqliteIndexModelStore } from './sqlite/sqlite-index-model.ts';
import { createSqliteNotificationOutbox } from './sqlite/sqlite-notification-outbox.ts';
import { createSqlitePendingVersions } from './sqlite/sqlite-pending-versions.ts';
import { createSqliteRetentionStore } from './sqlite/sqlite-retention.ts';
import { createSqliteSourceItemLookup } from './sqlite/sqlite-source-items.ts';
import { createSqliteTransfer } from './sqlite/sqlite-transfer.ts';
import { createSqliteVectorCache } from './sqlite/sqlite-vector-cache.ts';
import { createSqliteVersionStore } from './sqlite/sqlite-versions.ts';

export type { SqliteDocumentStoreOptions };

/**
 * The embedded runtime's {@link DocumentStore}: SQLite with FTS5 (BM25 keyword search) and
 * sqlite-vec (exact cosine vector search over the served chunks), in one database file that
 * several processes may share (WAL; every read-modify-write runs in an IMMEDIATE transaction),
 * with optional indexes beside it that follow the file through change logs: LanceDB full-text
 * (keywords) and HNSW (vectors).
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
 * - A deletion's pending notification (`NotificationOutbox`) is three columns of the document's
 *   row, written in the deletion's transaction and listed from a partial index of pending rows.
 * - Keyword search ORs the words of the text (stemmed, diacritics folded, no stop words removed).
 *   With the keyword index (`keywordIndex`) the score is the index's BM25; on the exact FTS5 path
 *   (no index, or one that cannot answer exactly now) it is the negated FTS5 `bm25()`. Either way
 *   higher is better, and one query's scores all come from one of them.
 *
 * One connection and its shared statements (`sqlite/sqlite-context.ts`) serve every role; each
 * role is built in its own file under `sqlite/`.
 */
export function createSqliteDocumentStore(options: SqliteDocumentStoreOptions): DocumentStore {
  const context = openSqliteContext(options);
  const versions = createSqliteVersionStore(context);
  const chunks = createSqliteChunkIndex(context);
  return {
    kind: 'sqlite',
    ...versions,
    ...createSqliteSourceItemLookup(context),
    ...chunks,
    async completeVersionWithChunks(documentId, version, written, result) {
      await chunks.putChunks(written);
      return versions.completeVersion(documentId, version, result);
    },
    ...createSqliteIndexModelStore(context),
    ...createSqliteVectorCache(context),
    ...createSqliteRetentionStore(context),
    ...createSqlitePendingVersions(context),
    ...createSqliteNotificationOutbox(context),
    ...createSqliteTransfer(context, options.file),
    // One transaction a batch, seen by the next query: nothing to defer or finish.
    importChunks: (written) => chunks.putChunks(written),
    async finishImport() {},

    async ping() {
      context.run(() => context.statements.ping.get());
      const lags = [context.keywords?.lag() ?? null, context.ann?.lag() ?? null].filter((lag) => lag !== null);
      return lags.length === 0 ? undefined : { degraded: lags.join('; ') };
    },

    async close() {
      await context.close();
    },
  };
}
