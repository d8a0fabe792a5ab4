import type { NotificationOutbox, PendingNotification } from '../document-store.port.ts';
import type { SqliteContext } from './sqlite-context.ts';

interface PendingRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly document_id: string;
  readonly recorded_at: string;
  readonly body: string;
}

/**
 * The {@link NotificationOutbox} role of the SQLite document store. A deletion's pending
 * notification is three columns of its document's row, written in the deletion's transaction
 * (`sqlite-versions.ts`); a purge moves it, with its own, to `notification_outbox` in the purge's
 * transaction. Both are read from indexes that hold the pending ones alone.
 */
export function createSqliteNotificationOutbox(context: SqliteContext): NotificationOutbox {
  const { db, run, write } = context;
  const pending = db.prepare<[number, number, number], PendingRow>(
    `SELECT * FROM (
       SELECT * FROM (
         SELECT notification_id AS id, workspace_id, id AS document_id, notification_at AS recorded_at,
           notification AS body
         FROM documents INDEXED BY documents_pending_notification
         WHERE notification_id IS NOT NULL ORDER BY notification_at, id LIMIT ?)
       UNION ALL
       SELECT * FROM (
         SELECT id, workspace_id, document_id, recorded_at, body FROM notification_outbox
         ORDER BY recorded_at, document_id, id LIMIT ?))
     ORDER BY recorded_at, document_id, id LIMIT ?`,
  );
  const clearHeld = db.prepare(
    `UPDATE documents SET notification_id = NULL, notification_at = NULL, notification = NULL
     WHERE id = ? AND notification_id = ?`,
  );
  const clearKept = db.prepare('DELETE FROM notification_outbox WHERE document_id = ? AND id = ?');
  return {
    async listPendingNotifications(limit) {
      const size = Math.max(0, Math.floor(limit));
      return run(() =>
        pending.all(size, size, size).map(
          (row): PendingNotification => ({
            id: row.id,
            workspaceId: row.workspace_id,
            documentId: row.document_id,
            recordedAt: row.recorded_at,
            body: row.body,
          }),
        ),
      );
    },
    async clearNotification(documentId, id) {
      write(() => {
        clearHeld.run(documentId, id);
        clearKept.run(documentId, id);
      });
    },
  };
}
