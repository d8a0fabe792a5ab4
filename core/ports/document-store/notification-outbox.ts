import type { DocumentRecord } from '../../model/document-records.model.ts';

/**
 * The notification of a change, kept by the store with the change itself until the message log
 * has taken it (an outbox entry; see {@link NotificationOutbox}).
 */
export interface PendingNotification {
  /** The notification's id: it stays the same however often the notification is published. */
  readonly id: string;
  readonly workspaceId: string;
  /** The document whose change it tells of. */
  readonly documentId: string;
  /** The instant of the change (a deletion's `deletedAt`). */
  readonly recordedAt: string;
  /** The notification as its caller encoded it: kept and answered unchanged, never read by the store. */
  readonly body: string;
}

/**
 * Makes the notification of a change from the document as the change leaves it; the store calls
 * it within the write. It may be called more than once (an adapter that retries its write after a
 * conflict): what the last call answered is recorded.
 */
export type NotificationDraft = (changed: DocumentRecord) => { readonly id: string; readonly body: string };

/**
 * Notifications of changes that the store recorded in the same write as the changes, not yet taken
 * by the message log: the outbox the document writes publish from
 * (`core/services/notification-outbox.service.ts`).
 *
 * Contract:
 * - Recording: a change given a {@link NotificationDraft} (`softDelete`, `purge`) stores the
 *   draft's notification with the change, so once the change is stored (whether or not its caller
 *   lived to see its promise resolve) the notification is pending, and it is never listed without
 *   the change. A call that makes no change (a document deleted before, a document that does not
 *   exist) records nothing and does not call the draft. A document holds one pending notification
 *   at most; a purge keeps it pending, with its own, after the document is gone.
 * - A purge the store cannot make in one write (OpenSearch) records its notifications before it
 *   removes anything and lists them only once the document is gone; a purge cut off half-way
 *   keeps them held until a later purge of the document finishes it, which keeps the first
 *   purge's notification (its draft is not called again).
 * - `listPendingNotifications` answers the pending notifications of every workspace, oldest first
 *   (by `recordedAt`, then document id, then id), at most `limit`, each exactly as recorded. It sees every
 *   notification whose write resolved before the call, of any instance (OpenSearch refreshes the
 *   documents index first). With none pending it is one indexed query.
 * - `clearNotification(documentId, id)` ends the pending state of that notification. It is
 *   idempotent, and changes nothing when the document holds no pending notification of that id
 *   (another one, none, or the document is gone).
 * - Delivery is at-least-once: a notification stays listed until it is cleared, so callers that
 *   publish and then clear may publish it more than once (several processes draining at once, a
 *   crash between the two), always under its one id. A purge without a draft removes the
 *   pending notification of its document with it.
 * - Outside the contract: backups (`DocumentTransfer`) neither carry nor restore pending notifications.
 */
export interface NotificationOutbox {
  listPendingNotifications(limit: number): Promise<PendingNotification[]>;
  clearNotification(documentId: string, id: string): Promise<void>;
}
