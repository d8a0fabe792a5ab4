/**
 * Schema of the SQLite document store, applied through `migrate` under the names below.
 *
 * - `documents`: one row per document; `status`/`name` mirror the latest version for list filters;
 *   `deleted_by` is the write key of its deletion.
 *   `source_item` is the item within its source it was created for (NULL: none);
 *   `notification_id`, `notification_at` and `notification` are the pending notification of its
 *   deletion, recorded in the deletion's transaction and cleared once the log took it (NULL: none).
 * - `notification_outbox`: pending notifications of purged documents (the purge's own, and the one
 *   the document held), written in the purge's transaction and deleted once the log took them.
 * - `versions`: one row per (document, version) with every `VersionRecord` field (JSON for
 *   `metadata`, `error` and `progress`) and the write key of the request that created it.
 * - `chunks`: one row per chunk; `seq` is the rowid the FTS5 index points at, `id` is the public
 *   `<document_id>:<version>:<index>`; `vector` is a float32 BLOB of the index model or NULL.
 * - `chunks_fts`: FTS5 external-content index over `chunks.content`, kept in sync by triggers.
 * - `vector_cache`: vectors by (model, chunk-content hash).
 * - `store_meta`: key/value settings (the index model).
 * - `vector_changes`: seqs of chunks whose vector may have changed, for the vector index.
 * - `keyword_changes`: seqs of chunks whose text, workspace or document may have changed, for the
 *   keyword index.
 *
 * All timestamps are ISO 8601 UTC strings with milliseconds, so string order is time order.
 */
export const DOCUMENT_STORE_MIGRATIONS: readonly { readonly name: string; readonly statements: readonly string[] }[] = [
  {
    name: 'document-store-001-initial',
    statements: [
      `CREATE TABLE documents (
          id TEXT PRIMARY KEY,
          workspace_id TEXT NOT NULL,
          source TEXT NOT NULL,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          deleted_at TEXT,
          latest_version INTEGER NOT NULL,
          served_version INTEGER,
          status TEXT NOT NULL,
          name TEXT NOT NULL
        )`,
      'CREATE INDEX documents_by_workspace ON documents (workspace_id, created_at DESC, id DESC)',
      `CREATE TABLE versions (
          document_id TEXT NOT NULL,
          version INTEGER NOT NULL,
          workspace_id TEXT NOT NULL,
          status TEXT NOT NULL,
          name TEXT NOT NULL,
          mime_type TEXT NOT NULL,
          size_bytes INTEGER NOT NULL,
          content_hash TEXT NOT NULL,
          storage_key TEXT NOT NULL,
          metadata TEXT NOT NULL,
          change_reason TEXT,
          restored_from INTEGER,
          created_by TEXT NOT NULL,
          created_at TEXT NOT NULL,
          completed_at TEXT,
          served_from TEXT,
          served_until TEXT,
          chunk_count INTEGER NOT NULL DEFAULT 0,
          tokens INTEGER NOT NULL DEFAULT 0,
          embedding_model TEXT,
          error TEXT,
          archived_at TEXT,
          PRIMARY KEY (document_id, version)
        ) WITHOUT ROWID`,
      'CREATE INDEX versions_by_served_until ON versions (workspace_id, served_until)',
      `CREATE TABLE chunks (
          seq INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          document_id TEXT NOT NULL,
          version INTEGER NOT NULL,
          workspace_id TEXT NOT NULL,
          idx INTEGER NOT NULL,
          content TEXT NOT NULL,
          content_hash TEXT NOT NULL,
          tokens INTEGER NOT NULL,
          start_offset INTEGER NOT NULL,
          end_offset INTEGER NOT NULL,
          page INTEGER,
          metadata TEXT NOT NULL,
          vector BLOB,
          model TEXT
        )`,
      'CREATE INDEX chunks_by_version ON chunks (document_id, version, idx)',
      'CREATE INDEX chunks_by_workspace ON chunks (workspace_id)',
      `CREATE VIRTUAL TABLE chunks_fts USING fts5(
          content,
          content = 'chunks',
          content_rowid = 'seq',
          tokenize = 'porter unicode61 remove_diacritics 2'
        )`,
      `CREATE TRIGGER chunks_fts_after_insert AFTER INSERT ON chunks BEGIN
          INSERT INTO chunks_fts (rowid, content) VALUES (new.seq, new.content);
        END`,
      `CREATE TRIGGER chunks_fts_after_delete AFTER DELETE ON chunks BEGIN
          INSERT INTO chunks_fts (chunks_fts, rowid, content) VALUES ('delete', old.seq, old.content);
        END`,
      `CREATE TRIGGER chunks_fts_after_update AFTER UPDATE OF content ON chunks BEGIN
          INSERT INTO chunks_fts (chunks_fts, rowid, content) VALUES ('delete', old.seq, old.content);
          INSERT INTO chunks_fts (rowid, content) VALUES (new.seq, new.content);
        END`,
      `CREATE TABLE vector_cache (
          model TEXT NOT NULL,
          content_hash TEXT NOT NULL,
          vector BLOB NOT NULL,
          PRIMARY KEY (model, content_hash)
        ) WITHOUT ROWID`,
      'CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID',
    ],
  },
  {
    // The change log the approximate vector index follows (sqlite-vector-index.ts): every write that
    // may change which vector a chunk holds appends the chunk's seq.
    name: 'document-store-002-vector-changes',
    statements: [
      'CREATE TABLE vector_changes (id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL)',
      `CREATE TRIGGER chunks_vector_after_insert AFTER INSERT ON chunks WHEN new.vector IS NOT NULL BEGIN
          INSERT INTO vector_changes (seq) VALUES (new.seq);
        END`,
      `CREATE TRIGGER chunks_vector_after_update AFTER UPDATE OF vector, model ON chunks BEGIN
          INSERT INTO vector_changes (seq) VALUES (new.seq);
        END`,
      `CREATE TRIGGER chunks_vector_after_delete AFTER DELETE ON chunks WHEN old.vector IS NOT NULL BEGIN
          INSERT INTO vector_changes (seq) VALUES (old.seq);
        END`,
    ],
  },
  {
    // How far an unfinished version's ingestion is (IngestProgress as JSON).
    name: 'document-store-003-version-progress',
    statements: ['ALTER TABLE versions ADD COLUMN progress TEXT'],
  },
  {
    // The change log the keyword index follows (sqlite-keyword-index.ts): every write that may change
    // what the index holds for a chunk (its text, workspace or document) appends the chunk's seq, in
    // the same transaction as the write.
    name: 'document-store-004-keyword-changes',
    statements: [
      'CREATE TABLE keyword_changes (id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL)',
      `CREATE TRIGGER chunks_keyword_after_insert AFTER INSERT ON chunks BEGIN
          INSERT INTO keyword_changes (seq) VALUES (new.seq);
        END`,
      `CREATE TRIGGER chunks_keyword_after_update AFTER UPDATE OF content, workspace_id, document_id ON chunks BEGIN
          INSERT INTO keyword_changes (seq) VALUES (new.seq);
        END`,
      `CREATE TRIGGER chunks_keyword_after_delete AFTER DELETE ON chunks BEGIN
          INSERT INTO keyword_changes (seq) VALUES (old.seq);
        END`,
    ],
  },
  {
    // Versions whose ingestion has not started, oldest first (`listPendingVersions`).
    name: 'document-store-005-pending-versions',
    statements: [
      "CREATE INDEX versions_pending ON versions (created_at, document_id, version) WHERE status = 'pending'",
    ],
  },
  {
    // The write keys of the requests that created a version or deleted a document (`findWrite`).
    name: 'document-store-006-write-keys',
    statements: [
      'ALTER TABLE versions ADD COLUMN write_key TEXT',
      'ALTER TABLE documents ADD COLUMN deleted_by TEXT',
      'CREATE INDEX versions_by_write_key ON versions (write_key) WHERE write_key IS NOT NULL',
      'CREATE INDEX documents_by_deletion_key ON documents (deleted_by) WHERE deleted_by IS NOT NULL',
    ],
  },
  {
    // The ingestion backlog per workspace and the versions completed lately (`countBacklog`), each
    // counted from an index that holds only the rows counted.
    name: 'document-store-007-backlog',
    statements: [
      "CREATE INDEX versions_unfinished ON versions (workspace_id) WHERE status IN ('pending', 'processing')",
      'CREATE INDEX versions_by_completed_at ON versions (completed_at, workspace_id) WHERE completed_at IS NOT NULL',
    ],
  },
  {
    // The item within its source a document was created for (`lookupSourceItems`).
    name: 'document-store-008-source-items',
    statements: [
      'ALTER TABLE documents ADD COLUMN source_item TEXT',
      'CREATE INDEX documents_by_source_item ON documents (workspace_id, source, source_item) WHERE source_item IS NOT NULL',
    ],
  },
  {
    // The notification of a change, pending until the message log took it (`NotificationOutbox`):
    // written in the change's transaction, listed oldest first from an index of the pending alone.
    name: 'document-store-009-pending-notifications',
    statements: [
      'ALTER TABLE documents ADD COLUMN notification_id TEXT',
      'ALTER TABLE documents ADD COLUMN notification_at TEXT',
      'ALTER TABLE documents ADD COLUMN notification TEXT',
      'CREATE INDEX documents_pending_notification ON documents (notification_at, id) WHERE notification_id IS NOT NULL',
      // Pending notifications of documents purged since: the purge's own, and the one its document held.
      `CREATE TABLE notification_outbox (
          id TEXT PRIMARY KEY,
          workspace_id TEXT NOT NULL,
          document_id TEXT NOT NULL,
          recorded_at TEXT NOT NULL,
          body TEXT NOT NULL
        ) WITHOUT ROWID`,
      'CREATE INDEX notification_outbox_by_time ON notification_outbox (recorded_at, document_id, id)',
    ],
  },
  {
    // The vector cache as a rowid table with a unique index on its key: a WITHOUT ROWID table keeps
    // each 1.5 kB vector in the key's B-tree, so inserts in content-hash order (random) split pages
    // that then hold two or three rows; here the rows are appended and only the small index takes the
    // random inserts (about half the file and half the time of a restore's or an ingestion's cache writes).
    name: 'document-store-010-vector-cache-rowid',
    statements: [
      `CREATE TABLE vector_cache_rows (
          model TEXT NOT NULL,
          content_hash TEXT NOT NULL,
          vector BLOB NOT NULL,
          UNIQUE (model, content_hash)
        )`,
      'INSERT INTO vector_cache_rows (model, content_hash, vector) SELECT model, content_hash, vector FROM vector_cache',
      'DROP TABLE vector_cache',
      'ALTER TABLE vector_cache_rows RENAME TO vector_cache',
    ],
  },
];
