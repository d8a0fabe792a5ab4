/**
 * The outbox of the document writes' notifications. A write that must notify (a deletion) records
 * its notification pending in the same store write as the change (see `NotificationOutbox` in the
 * document store port), answers once that write is stored, and publishes the notification to the
 * log right after; once the log took it, the pending mark is cleared. Whatever the log refused,
 * or a process killed before it published, stays pending in the store and is published by a
 * drain: after a failure, and in every process that serves writes at start-up and then
 * periodically. A notification keeps its id however often it is published, so each webhook
 * delivery of it keeps its `webhook-id`; delivery is at-least-once (several processes draining
 * at once, a crash between publishing and clearing, publish it again under that id).
 */
import { type Notification, type NotificationPayload, publishNotification } from '../events/notifications.ts';
import type { DocumentRecord } from '../model/document-records.model.ts';
import type { Logger } from '../model/logger.model.ts';
import { silentLogger } from '../model/logger.model.ts';
import type {
  NotificationDraft,
  NotificationOutbox,
  PendingNotification,
} from '../ports/document-store/document-store.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';

export interface NotificationOutboxDeps {
  readonly store: NotificationOutbox;
  readonly log: MessageLog;
  /** The notification topic. */
  readonly topic: string;
  readonly logger?: Logger;
  /** The first pause before a drain after a publish failed, doubling up to 30 s (default 1 s). */
  readonly retryMs?: number;
  /**
   * Once started, how often a drain looks for notifications left pending (by a process killed
   * before it published them, or another process's failed publish), default 30 s.
   */
  readonly idleMs?: number;
}

/**
 * A draft for a store write, and the notification it made once the store called it. From the
 * moment the store calls the draft until `release`, this process's drains leave that notification
 * to its writer (so that a drain running between the write and the writer's own publish does not
 * publish it a second time); call `release` once the write is done, whatever happened.
 */
export interface DraftedNotification {
  readonly draft: NotificationDraft;
  /** The notification the store recorded; undefined when the write made no change. */
  recorded(): Notification | undefined;
  /**
   * Publishes the recorded notification now, as {@link NotificationOutboxService.deliver} does;
   * with none recorded (the change was made by an earlier request), asks for a drain instead.
   */
  deliver(documentId: string): Promise<void>;
  /** Ends the writer's hold; a notification recorded but not delivered is left to a drain, soon. */
  release(): void;
}

export interface NotificationOutboxService {
  /** The draft a write gives the store: `make` builds the notification from the changed document. */
  draft(make: (changed: DocumentRecord) => Notification): DraftedNotification;
  /**
   * Publishes a notification recorded pending and clears it. A failure leaves it pending (it is
   * logged, and a drain is scheduled); it never rejects.
   */
  deliver(documentId: string, notification: Notification): Promise<void>;
  /** Asks for a drain soon (a write found a change an earlier request made, its notification maybe pending). */
  wake(): void;
  /** Publishes what is pending, clearing each; resolves with how many were published. Rejects when the store or the log fails. */
  drain(): Promise<number>;
  /** Drains now, then every `idleMs` (sooner after a failure, until nothing is left). */
  start(): void;
  /** Stops the drains; resolves when the one under way has ended. */
  close(): Promise<void>;
}

/** Pending notifications published per store query. */
const BATCH = 100;
const MAX_RETRY_MS = 30_000;

function encode(notification: Notification): string {
  return JSON.stringify({
    id: notification.id,
    workspaceId: notification.workspaceId,
    subject: notification.subject,
    payload: notification.payload,
  });
}

/** The notification a pending entry holds; null when its body is not one (it is left pending and logged). */
function decode(pending: PendingNotification): Notification | null {
  try {
    const value = JSON.parse(pending.body) as Partial<Notification>;
    const payload = value.payload as Partial<NotificationPayload> | undefined;
    if (
      value.id !== pending.id ||
      typeof value.workspaceId !== 'string' ||
      typeof value.subject !== 'string' ||
      typeof payload?.type !== 'string' ||
      typeof payload.timestamp !== 'string' ||
      typeof payload.data !== 'object' ||
      payload.data === null
    ) {
      return null;
    }
    return {
      id: value.id,
      workspaceId: value.workspaceId,
      subject: value.subject,
      payload: payload as NotificationPayload,
    };
  } catch {
    return null;
  }
}

export function createNotificationOutboxService(deps: NotificationOutboxDeps): NotificationOutboxService {
  const { store, log, topic } = deps;
  const logger = deps.logger ?? silentLogger;
  const retryMs = deps.retryMs ?? 1000;
  const idleMs = deps.idleMs ?? 30_000;
  /** Notifications this process is publishing right now: a drain leaves them to their writer. */
  const delivering = new Set<string>();
  let started = false;
  let closed = false;
  let pause = retryMs;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Number.POSITIVE_INFINITY;
  let running: Promise<void> = Promise.resolve();

  /** Runs a drain in `ms` unless one is due sooner. */
  function schedule(ms: number): void {
    if (closed || Date.now() + ms >= dueAt) return;
    clearTimeout(timer);
    dueAt = Date.now() + ms;
    timer = setTimeout(() => {
      timer = undefined;
      dueAt = Number.POSITIVE_INFINITY;
      running = running.then(runDrain);
    }, ms);
    timer.unref();
  }

  async function publishPending(pending: PendingNotification): Promise<boolean> {
    const notification = decode(pending);
    if (notification === null) {
      logger.error(
        { notification_id: pending.id, document_id: pending.documentId },
        'a pending notification cannot be read; it is left pending and not published',
      );
      return false;
    }
    await publishNotification(log, topic, notification);
    await store.clearNotification(pending.documentId, pending.id);
    return true;
  }

  async function drain(): Promise<number> {
    let published = 0;
    for (;;) {
      const pending = await store.listPendingNotifications(BATCH);
      let progressed = false;
      for (const entry of pending) {
        if (delivering.has(entry.id)) continue;
        if (await publishPending(entry)) {
          published += 1;
          progressed = true;
        }
      }
      if (pending.length < BATCH || !progressed) return published;
    }
  }

  async function runDrain(): Promise<void> {
    if (closed) return;
    try {
      const published = await drain();
      if (published > 0) {
        logger.info({ count: published }, 'published notifications of changes written that were left pending');
      }
      pause = retryMs;
      if (started) schedule(idleMs);
    } catch (error) {
      logger.warn(
        { err: String(error), retry_in_ms: pause },
        'could not publish the pending notifications of changes written; trying again',
      );
      schedule(pause);
      pause = Math.min(MAX_RETRY_MS, pause * 2);
    }
  }

  async function deliver(documentId: string, notification: Notification): Promise<void> {
    delivering.add(notification.id);
    try {
      await publishNotification(log, topic, notification);
      await store.clearNotification(documentId, notification.id);
    } catch (error) {
      logger.warn(
        { err: String(error), type: notification.payload.type, document_id: documentId },
        'could not publish the notification of a change written; it stays pending and is published again',
      );
      schedule(pause);
    } finally {
      delivering.delete(notification.id);
    }
  }

  return {
    draft(make) {
      let recorded: Notification | undefined;
      let delivered = false;
      const held: string[] = [];
      return {
        draft: (changed) => {
          recorded = make(changed);
          held.push(recorded.id);
          delivering.add(recorded.id);
          return { id: recorded.id, body: encode(recorded) };
        },
        recorded: () => recorded,
        async deliver(documentId) {
          if (recorded === undefined) {
            schedule(0);
            return;
          }
          delivered = true;
          await deliver(documentId, recorded);
        },
        release() {
          for (const id of held.splice(0)) delivering.delete(id);
          if (recorded !== undefined && !delivered) schedule(0);
        },
      };
    },

    deliver,

    wake() {
      schedule(0);
    },

    drain,

    start() {
      if (started || closed) return;
      started = true;
      schedule(0);
    },

    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
