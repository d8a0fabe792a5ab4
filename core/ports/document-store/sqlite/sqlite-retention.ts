import { KbError } from '../../../errors/kb-error.ts';
import type { RetentionStore } from '../document-store.port.ts';
import { canonicalTime } from '../stored-records.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { toVersionRecord, type VersionRow } from './sqlite-rows.ts';

/**
 * The {@link RetentionStore} role of the SQLite document store: archiving deletes a version's
 * chunk rows and stamps the version row.
 */
export function createSqliteRetentionStore(context: SqliteContext): RetentionStore {
  const { db, run, write, versionRow } = context;
  const statements = {
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
  };

  return {
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
        context.statements.deleteChunks.run(documentId, version);
        statements.markArchived.run({ id: documentId, version, at: when });
      });
    },

    async archivedHorizon(workspaceId) {
      return run(() => statements.archivedHorizon.get(workspaceId)?.horizon ?? null);
    },

    async listWorkspaces() {
      return run(() => statements.workspaces.all().map((row) => row.workspace_id));
    },
  };
}
