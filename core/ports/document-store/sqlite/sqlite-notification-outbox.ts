import type { NotificationOutbox, PendingNotification } from '../document-store.port.ts';
import type { SqliteContext } from './sqlite-context.ts';

interface PendingRow {
  readonly id: string;
  readonly workspace_id: string;
  readonly notification_id: string;
  readonly notification_at: string;
  readonly notification: string;
}

/**
 * The {@link NotificationOutbox} role of the SQLite document store: the pending notification is
 * three columns of its document's row, written in the change's transaction (`sqlite-versions.ts`)
 * and listed from a partial index that holds the pending ones alone.
 */
export function createSqliteNotificationOutbox(context: SqliteContext): NotificationOutbox {
  const { db, run, write } = context;
  const pending = db.prepare<[number], PendingRow>(
    `SELECT id, workspace_id, notification_id, notification_at, notification
     FROM documents INDEXED BY documents_pending_notification
     WHERE notification_id IS NOT NULL ORDER BY notification_at, id LIMIT ?`,
  );
  const clear = db.prepare(
    `UPDATE documents SET notification_id = NULL, notification_at = NULL, notification = NULL
     WHERE id = ? AND notification_id = ?`,
  );
  return {
    async listPendingNotifications(limit) {
      return run(() =>
        pending.all(Math.max(0, Math.floor(limit))).map(
          (row): PendingNotification => ({
            id: row.notification_id,
            workspaceId: row.workspace_id,
            documentId: row.id,
            recordedAt: row.notification_at,
            body: row.notification,
          }),
        ),
      );
    },
    async clearNotification(documentId, id) {
      write(() => clear.run(documentId, id));
    },
  };
}
