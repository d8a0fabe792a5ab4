import type { Statement } from 'better-sqlite3';
import { KbError } from '../../../errors/kb-error.ts';
import type { DocumentRecord, VersionRecord, VersionStatus } from '../../../model/document-records.model.ts';
import { VERSION_STATUSES } from '../../../model/document-records.model.ts';
import type {
  DocumentListQuery,
  NewDocument,
  NewVersion,
  RecordedWrite,
  VersionPatch,
  VersionStore,
} from '../document-store.port.ts';
import { canonicalTime, toStoredProgress } from '../stored-records.ts';
import type { SqliteContext } from './sqlite-context.ts';
import {
  DOCUMENT_COLUMNS,
  type DocumentRow,
  toDocumentRecord,
  toVersionRecord,
  type VersionRow,
} from './sqlite-rows.ts';

function later(first: string, second: string | null): string {
  return second !== null && second > first ? second : first;
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
    write_key: input.writeKey ?? null,
  };
}

/**
 * The {@link VersionStore} role of the SQLite document store: documents and versions rows, the
 * served interval bookkeeping, soft delete and purge. Every read-modify-write runs in one IMMEDIATE
 * transaction, so concurrent appends (also from other processes) get distinct numbers.
 */
export function createSqliteVersionStore(context: SqliteContext): Omit<VersionStore, 'lookupSourceItems'> {
  const { db, run, write, versionRow } = context;
  const statements = {
    documentById: db.prepare<[string, string], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM documents d
       JOIN versions v ON v.document_id = d.id AND v.version = d.latest_version
       WHERE d.id = ? AND d.workspace_id = ?`,
    ),
    documentMeta: db.prepare<
      [string],
      {
        workspace_id: string;
        source: string;
        deleted_at: string | null;
        latest_version: number;
        served_version: number | null;
      }
    >('SELECT workspace_id, source, deleted_at, latest_version, served_version FROM documents WHERE id = ?'),
    insertDocument: db.prepare(
      `INSERT INTO documents (id, workspace_id, source, source_item, created_at, updated_at, deleted_at,
         latest_version, served_version, status, name)
       VALUES (@id, @workspace_id, @source, @source_item, @created_at, @created_at, NULL, 1, NULL, 'pending', @name)`,
    ),
    insertVersion: db.prepare(
      `INSERT INTO versions (document_id, version, workspace_id, status, name, mime_type, size_bytes, content_hash,
         storage_key, metadata, change_reason, restored_from, created_by, created_at, write_key)
       VALUES (@document_id, @version, @workspace_id, 'pending', @name, @mime_type, @size_bytes, @content_hash,
         @storage_key, @metadata, @change_reason, @restored_from, @created_by, @created_at, @write_key)`,
    ),
    bumpLatest: db.prepare(
      `UPDATE documents SET latest_version = @version, status = 'pending', name = @name, updated_at = @at
       WHERE id = @id`,
    ),
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
    softDelete: db.prepare(
      `UPDATE documents SET deleted_at = @at, updated_at = @at, served_version = NULL, deleted_by = @write_key
       WHERE id = @id`,
    ),
    recordNotification: db.prepare(
      'UPDATE documents SET notification_id = @notification_id, notification_at = @at, notification = @body WHERE id = @id',
    ),
    deletionByKey: db.prepare<[string, string], { id: string; latest_version: number }>(
      `SELECT id, latest_version FROM documents WHERE deleted_by = ? AND workspace_id = ?
       ORDER BY deleted_at DESC, id DESC LIMIT 1`,
    ),
    versionByKey: db.prepare<[string, string], { document_id: string; version: number }>(
      `SELECT v.document_id, v.version FROM versions v JOIN documents d ON d.id = v.document_id
       WHERE v.write_key = ? AND v.workspace_id = ? ORDER BY v.created_at DESC, v.version DESC LIMIT 1`,
    ),
    heldNotification: db.prepare<
      [string],
      { notification_id: string | null; notification_at: string | null; notification: string | null }
    >('SELECT notification_id, notification_at, notification FROM documents WHERE id = ?'),
    keepNotification: db.prepare(
      `INSERT OR IGNORE INTO notification_outbox (id, workspace_id, document_id, recorded_at, body)
       VALUES (@id, @workspace_id, @document_id, @recorded_at, @body)`,
    ),
    purgeChunks: db.prepare('DELETE FROM chunks WHERE document_id = ?'),
    purgeVersions: db.prepare('DELETE FROM versions WHERE document_id = ?'),
    purgeDocument: db.prepare('DELETE FROM documents WHERE id = ? AND workspace_id = ?'),
    statusCounts: db.prepare<[], { status: VersionStatus; n: number }>(
      'SELECT status, count(*) AS n FROM documents WHERE deleted_at IS NULL GROUP BY status',
    ),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };

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
          source_item: input.sourceItem ?? null,
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
      return `${context.writes()}.${run(() => statements.dataVersion.get())}`;
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

    async getDocumentAndVersion(workspaceId, documentId, version) {
      return run(() => {
        const document = statements.documentById.get(documentId, workspaceId);
        const row = versionRow(documentId, version);
        return {
          document: document === undefined || document.d_deleted_at !== null ? null : toDocumentRecord(document),
          version: row === undefined ? null : toVersionRecord(row),
        };
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
        if (row === undefined || document === undefined) return { served: false, completed: null };
        if (row.status === 'completed') {
          return {
            served: row.served_from !== null,
            completed: { name: row.name, completedAt: row.completed_at ?? at, source: document.source },
          };
        }
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
        return { served, completed: { name: row.name, completedAt: at, source: document.source } };
      });
    },

    async softDelete(workspaceId, documentId, at, writeKey, notify) {
      const when = canonicalTime(at, 'at');
      return write(() => {
        const document = statements.documentMeta.get(documentId);
        if (document === undefined || document.workspace_id !== workspaceId) return null;
        // Deleted before, in one transaction: nothing was left undone.
        if (document.deleted_at !== null)
          return toDocumentRecord(statements.documentById.get(documentId, workspaceId)!);
        if (document.served_version !== null) {
          const served = versionRow(documentId, document.served_version);
          statements.endServing.run({
            id: documentId,
            version: document.served_version,
            at: later(when, served?.served_from ?? null),
          });
        }
        statements.softDelete.run({ id: documentId, at: when, write_key: writeKey ?? null });
        const deleted = toDocumentRecord(statements.documentById.get(documentId, workspaceId)!);
        if (notify !== undefined) {
          // In the deletion's transaction: the deletion is never stored without its notification.
          const notification = notify(deleted);
          statements.recordNotification.run({
            id: documentId,
            notification_id: notification.id,
            at: when,
            body: notification.body,
          });
        }
        return deleted;
      });
    },

    async findWrite(workspaceId, writeKey) {
      // The version and its document are written in one transaction: a version found is whole.
      return run((): RecordedWrite | null => {
        const deletion = statements.deletionByKey.get(writeKey, workspaceId);
        if (deletion !== undefined) {
          return { kind: 'deletion', documentId: deletion.id, version: deletion.latest_version };
        }
        const version = statements.versionByKey.get(writeKey, workspaceId);
        return version === undefined
          ? null
          : { kind: 'version', documentId: version.document_id, version: version.version };
      });
    },

    async purge(workspaceId, documentId, notify) {
      const now = new Date().toISOString();
      return write(() => {
        const document = statements.documentMeta.get(documentId);
        if (document === undefined || document.workspace_id !== workspaceId) return false;
        if (notify !== undefined) {
          // In the purge's transaction, to a table the purge leaves: the notification the document
          // held (its deletion's, still pending) and the purge's own.
          const held = statements.heldNotification.get(documentId);
          const keep = (id: string, recordedAt: string, body: string) =>
            statements.keepNotification.run({
              id,
              workspace_id: workspaceId,
              document_id: documentId,
              recorded_at: recordedAt,
              body,
            });
          if (held?.notification_id && held.notification_at !== null && held.notification !== null) {
            keep(held.notification_id, held.notification_at, held.notification);
          }
          const row = statements.documentById.get(documentId, workspaceId);
          if (row !== undefined) {
            const notification = notify(toDocumentRecord(row));
            keep(notification.id, now, notification.body);
          }
        }
        statements.purgeChunks.run(documentId);
        statements.purgeVersions.run(documentId);
        statements.purgeDocument.run(documentId, workspaceId);
        return true;
      });
    },

    async countDocumentsByStatus() {
      const counts = Object.fromEntries(VERSION_STATUSES.map((s) => [s, 0])) as Record<VersionStatus, number>;
      for (const row of run(() => statements.statusCounts.all())) counts[row.status] = row.n;
      return counts;
    },
  };
}
