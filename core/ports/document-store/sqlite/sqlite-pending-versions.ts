import type { PendingVersions } from '../document-store.port.ts';
import { canonicalTime } from '../stored-records.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { toVersionRecord, type VersionRow } from './sqlite-rows.ts';

interface WorkspaceCount {
  readonly workspace_id: string;
  readonly n: number;
}

const byWorkspace = (rows: readonly WorkspaceCount[]): Record<string, number> =>
  Object.fromEntries(rows.map((row) => [row.workspace_id, row.n]));

/**
 * The {@link PendingVersions} role of the SQLite document store: partial indexes on pending
 * versions, on unfinished ones by workspace and on completion times.
 */
export function createSqlitePendingVersions(context: SqliteContext): PendingVersions {
  const { db, run } = context;
  const pending = db.prepare<[string, number], VersionRow>(
    `SELECT * FROM versions WHERE status = 'pending' AND created_at < ?
     ORDER BY created_at, document_id, version LIMIT ?`,
  );
  // The conditions repeat the partial indexes' own, so that each count reads its index alone.
  const unfinished = db.prepare<[], WorkspaceCount>(
    `SELECT workspace_id, COUNT(*) AS n FROM versions INDEXED BY versions_unfinished
     WHERE status IN ('pending', 'processing') GROUP BY workspace_id`,
  );
  const completed = db.prepare<[string], WorkspaceCount>(
    `SELECT workspace_id, COUNT(*) AS n FROM versions INDEXED BY versions_by_completed_at
     WHERE completed_at IS NOT NULL AND completed_at >= ? GROUP BY workspace_id`,
  );
  return {
    async listPendingVersions(createdBefore, limit) {
      const before = canonicalTime(createdBefore, 'createdBefore');
      return run(() => pending.all(before, limit).map(toVersionRecord));
    },
    async countBacklog(completedSince) {
      const since = canonicalTime(completedSince, 'completedSince');
      return run(() => ({ unfinished: byWorkspace(unfinished.all()), completed: byWorkspace(completed.all(since)) }));
    },
  };
}
