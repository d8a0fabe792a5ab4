/**
 * Notification events: the state changes a client may be told about, one JSON shape for webhooks
 * and the event stream, following the Standard Webhooks payload `{type, timestamp, data}`. The
 * pipeline and the services publish one to the `kb.notification` topic right after the state it
 * reports is committed (a reader told that a version completed can search it at once).
 */
import { v7 as uuidv7 } from 'uuid';
import type { AuditActor } from '../model/account-records.model.ts';
import type { DocumentRecord, VersionRecord } from '../model/document-records.model.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { RunRecord, SourceRecord } from '../ports/source-store/source-store.port.ts';
import { isoNow } from '../util/time.ts';

/**
 * Every event type published to the notification topic. A new kind of event is one more entry
 * here (and a builder like {@link documentNotification} for its data).
 */
export const NOTIFICATION_TYPES = [
  'document.version.completed',
  'document.version.failed',
  'document.deleted',
  'document.purged',
  'source.sync.completed',
  'source.sync.failed',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** The event a `POST /webhooks/:id/test` sends: never on the log, only to that endpoint. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The payload clients receive: the body of a webhook delivery and the `data` of a stream event. */
export interface NotificationPayload {
  readonly type: string;
  /** ISO 8601 instant the state was committed. */
  readonly timestamp: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A notification as it travels on the log. */
export interface Notification {
  /** Stable id: the webhook-id of every delivery of it. */
  readonly id: string;
  readonly workspaceId: string;
  /**
   * What it is about (a document's id; a source's id for `source.*` events): its key on the log,
   * so one subject's events keep their order.
   */
  readonly subject: string;
  readonly payload: NotificationPayload;
}

/**
 * The data of a document event: the document, the version concerned, for a failure why, and for
 * a deletion or purge who made it (`actor`, as in the audit log).
 */
export function documentNotification(
  type: NotificationType,
  document: Pick<DocumentRecord, 'id' | 'workspaceId' | 'source'>,
  version: Pick<VersionRecord, 'version' | 'status' | 'name' | 'error'> | null,
  at: string = isoNow(),
  actor?: AuditActor,
): Notification {
  const error = version?.error ?? null;
  return {
    id: uuidv7(),
    workspaceId: document.workspaceId,
    subject: document.id,
    payload: {
      type,
      timestamp: at,
      data: {
        workspace_id: document.workspaceId,
        document_id: document.id,
        version: version?.version ?? null,
        status:
          type === 'document.deleted' ? 'deleted' : type === 'document.purged' ? 'purged' : (version?.status ?? null),
        name: version?.name ?? null,
        source: document.source,
        ...(type === 'document.version.failed'
          ? { error: { code: error?.code ?? 'unknown', detail: error?.message ?? '', stage: error?.stage ?? null } }
          : {}),
        ...(actor ? { actor: { ...actor } } : {}),
      },
    },
  };
}

/**
 * The event of a finished sync run (`source.sync.completed` or `source.sync.failed`), about the
 * source: its id, name and kind, the run with its counts and, for a failed run, its first error.
 * Its `actor` is the source (as in the audit entries of the run's writes); it names no document.
 */
export function sourceRunNotification(
  source: Pick<SourceRecord, 'id' | 'workspaceId' | 'name' | 'kind'>,
  run: Pick<RunRecord, 'id' | 'status' | 'startedAt' | 'finishedAt' | 'counts' | 'errors'>,
): Notification {
  const failed = run.status === 'failed';
  const first = run.errors[0];
  return {
    id: uuidv7(),
    workspaceId: source.workspaceId,
    subject: source.id,
    payload: {
      type: failed ? 'source.sync.failed' : 'source.sync.completed',
      timestamp: run.finishedAt ?? isoNow(),
      data: {
        workspace_id: source.workspaceId,
        source_id: source.id,
        source: source.name,
        kind: source.kind,
        run_id: run.id,
        status: run.status,
        started_at: run.startedAt,
        finished_at: run.finishedAt,
        counts: run.counts,
        actor: { type: 'source', id: source.id, name: source.name },
        ...(failed ? { error: { code: first?.code ?? 'unknown', detail: first?.detail ?? '' } } : {}),
      },
    },
  };
}

/** The Avro record of a notification on the log (schemas/notification.avsc). */
export function notificationRecord(notification: Notification): Record<string, unknown> {
  return {
    event_id: notification.id,
    type: notification.payload.type,
    occurred_at: notification.payload.timestamp,
    workspace_id: notification.workspaceId,
    subject: notification.subject,
    data: JSON.stringify(notification.payload.data),
  };
}

/** A notification read back from its log record. */
export function notificationFromRecord(value: Record<string, unknown>): Notification {
  return {
    id: String(value.event_id),
    workspaceId: String(value.workspace_id),
    subject: String(value.subject),
    payload: {
      type: String(value.type),
      timestamp: String(value.occurred_at),
      data: JSON.parse(String(value.data)) as Record<string, unknown>,
    },
  };
}

/**
 * Publishes `notification` to the notification topic, keyed by its subject. Call it after the
 * state it reports is committed; resolves once it is durable. Delivery onwards is at-least-once:
 * a replay (a stage's event redelivered after a crash) may publish the same state change again
 * under a new id.
 */
export async function publishNotification(log: MessageLog, topic: string, notification: Notification): Promise<void> {
  await log.publish(topic, [{ key: notification.subject, value: notificationRecord(notification) }]);
}
