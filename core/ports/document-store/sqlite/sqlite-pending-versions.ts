import type { PendingVersions } from '../document-store.port.ts';
import { canonicalTime } from '../stored-records.ts';
import type { SqliteContext } from './sqlite-context.ts';
import { toVersionRecord, type VersionRow } from './sqlite-rows.ts';

/** The {@link PendingVersions} role of the SQLite document store (a partial index on pending versions). */
export function createSqlitePendingVersions(context: SqliteContext): PendingVersions {
  const { db, run } = context;
  const pending = db.prepare<[string, number], VersionRow>(
    `SELECT * FROM versions WHERE status = 'pending' AND created_at < ?
     ORDER BY created_at, document_id, version LIMIT ?`,
  );
  return {
    async listPendingVersions(createdBefore, limit) {
      const before = canonicalTime(createdBefore, 'createdBefore');
      return run(() => pending.all(before, limit).map(toVersionRecord));
    },
  };
}
