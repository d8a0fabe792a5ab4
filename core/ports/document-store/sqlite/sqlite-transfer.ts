import type { VersionRecord } from '../../../model/document-records.model.ts';
import { type Database, openDatabase } from '../../sqlite/open-database.ts';
import type { DocumentSnapshot, DocumentTransfer, StoredChunk, StoredDocument } from '../document-store.port.ts';
import { bytesToVector, canonicalTime, toStoredProgress } from '../stored-records.ts';
import { INDEX_MODEL_KEY, type SqliteContext } from './sqlite-context.ts';
import { CHUNK_COLUMNS, type ChunkRow, toChunkRecord, toVersionRecord, type VersionRow } from './sqlite-rows.ts';

interface DocumentOnlyRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly source: string;
  readonly source_item: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at: string | null;
  readonly latest_version: number;
  readonly served_version: number | null;
}

interface ChunkVectorRow extends ChunkRow {
  readonly vector: Buffer | null;
  readonly model: string | null;
}

/**
 * A snapshot read on `db` inside one read transaction (`BEGIN` and a first read fix the view; WAL
 * lets writers of other connections go on meanwhile, the WAL file only grows until it ends).
 */
function snapshotOn(db: Database, ownConnection: boolean): DocumentSnapshot {
  const statements = {
    documents: db.prepare<[string, number], DocumentOnlyRow>(
      `SELECT id, workspace_id, source, source_item, created_at, updated_at, deleted_at, latest_version, served_version
       FROM documents WHERE id > ? ORDER BY id LIMIT ?`,
    ),
    versions: db.prepare<[string], VersionRow>('SELECT * FROM versions WHERE document_id = ? ORDER BY version'),
    chunks: db.prepare<[string, number], ChunkVectorRow>(
      `SELECT ${CHUNK_COLUMNS}, c.vector, c.model FROM chunks c WHERE c.document_id = ? AND c.version = ? ORDER BY c.idx`,
    ),
    meta: db.prepare<[string], { value: string }>('SELECT value FROM store_meta WHERE key = ?'),
  };
  if (ownConnection) db.exec('BEGIN');
  // The first read fixes the transaction's view of the database.
  const modelRow = statements.meta.get(INDEX_MODEL_KEY);
  const at = new Date().toISOString();
  let closed = false;
  return {
    at,
    exact: ownConnection,
    indexModel: modelRow === undefined ? null : JSON.parse(modelRow.value),
    async documents(afterId, limit) {
      return statements.documents.all(afterId, limit).map((row) => ({
        document: {
          id: row.id,
          workspaceId: row.workspace_id,
          source: row.source,
          ...(row.source_item !== null ? { sourceItem: row.source_item } : {}),
          createdAt: row.created_at,
          updatedAt: row.updated_at,
          deletedAt: row.deleted_at,
          latestVersion: row.latest_version,
          servedVersion: row.served_version,
        },
        versions: statements.versions.all(row.id).map(toVersionRecord),
      }));
    },
    async chunks(documentId, version): Promise<StoredChunk[]> {
      return statements.chunks.all(documentId, version).map((row) => ({
        ...toChunkRecord(row),
        vector: row.vector === null ? null : bytesToVector(row.vector),
        model: row.model,
      }));
    },
    async close() {
      if (closed || !ownConnection) return;
      closed = true;
      try {
        db.exec('COMMIT');
      } finally {
        db.close();
      }
    },
  };
}

/**
 * The {@link DocumentTransfer} role of the SQLite document store. A snapshot reads on a connection
 * of its own in one read transaction, so it is exact; a `:memory:` store has no second connection
 * and answers a snapshot on its own connection (not exact: the caller cuts it at `at`). Its chunk
 * imports are the chunk index's writes (composed in the adapter).
 */
export function createSqliteTransfer(
  context: SqliteContext,
  file: string,
): Pick<DocumentTransfer, 'openSnapshot' | 'importDocument'> {
  const { db, write } = context;
  const statements = {
    deleteChunks: db.prepare('DELETE FROM chunks WHERE document_id = ?'),
    deleteVersions: db.prepare('DELETE FROM versions WHERE document_id = ?'),
    deleteDocument: db.prepare('DELETE FROM documents WHERE id = ?'),
    insertDocument: db.prepare(
      `INSERT INTO documents (id, workspace_id, source, source_item, created_at, updated_at, deleted_at,
         latest_version, served_version, status, name)
       VALUES (@id, @workspace_id, @source, @source_item, @created_at, @updated_at, @deleted_at, @latest_version,
         @served_version, @status, @name)`,
    ),
    insertVersion: db.prepare(
      `INSERT INTO versions (document_id, version, workspace_id, status, name, mime_type, size_bytes, content_hash,
         storage_key, metadata, change_reason, restored_from, created_by, created_at, completed_at, served_from,
         served_until, chunk_count, tokens, embedding_model, error, archived_at, progress)
       VALUES (@document_id, @version, @workspace_id, @status, @name, @mime_type, @size_bytes, @content_hash,
         @storage_key, @metadata, @change_reason, @restored_from, @created_by, @created_at, @completed_at,
         @served_from, @served_until, @chunk_count, @tokens, @embedding_model, @error, @archived_at, @progress)`,
    ),
  };
  const time = (value: string | null, field: string) => (value === null ? null : canonicalTime(value, field));

  function versionRow(v: VersionRecord) {
    return {
      document_id: v.documentId,
      version: v.version,
      workspace_id: v.workspaceId,
      status: v.status,
      name: v.name,
      mime_type: v.mimeType,
      size_bytes: v.sizeBytes,
      content_hash: v.contentHash,
      storage_key: v.storageKey,
      metadata: JSON.stringify(v.metadata ?? {}),
      change_reason: v.changeReason,
      restored_from: v.restoredFrom,
      created_by: v.createdBy,
      created_at: canonicalTime(v.createdAt, 'createdAt'),
      completed_at: time(v.completedAt, 'completedAt'),
      served_from: time(v.servedFrom, 'servedFrom'),
      served_until: time(v.servedUntil, 'servedUntil'),
      chunk_count: v.chunkCount,
      tokens: v.tokens,
      embedding_model: v.embeddingModel,
      error: v.error === null ? null : JSON.stringify(v.error),
      archived_at: time(v.archivedAt, 'archivedAt'),
      progress: v.progress === null ? null : JSON.stringify(toStoredProgress(v.progress)),
    };
  }

  return {
    async openSnapshot() {
      if (file === ':memory:') return snapshotOn(db, false);
      return snapshotOn(openDatabase(file), true);
    },

    async importDocument(document: StoredDocument, versions: readonly VersionRecord[]) {
      const latest = versions.find((v) => v.version === document.latestVersion) ?? versions[versions.length - 1];
      write(() => {
        statements.deleteChunks.run(document.id);
        statements.deleteVersions.run(document.id);
        statements.deleteDocument.run(document.id);
        statements.insertDocument.run({
          id: document.id,
          workspace_id: document.workspaceId,
          source: document.source,
          source_item: document.sourceItem ?? null,
          created_at: canonicalTime(document.createdAt, 'createdAt'),
          updated_at: canonicalTime(document.updatedAt, 'updatedAt'),
          deleted_at: time(document.deletedAt, 'deletedAt'),
          latest_version: document.latestVersion,
          served_version: document.servedVersion,
          status: latest?.status ?? 'pending',
          name: latest?.name ?? '',
        });
        for (const version of versions) statements.insertVersion.run(versionRow(version));
      });
    },
  };
}
