import { KbError } from '../errors/kb-error.ts';
import { NOTIFICATION_TYPES, type NotificationPayload, notificationFromRecord } from '../events/notifications.ts';
import type { MessageLogTail, Subscription } from '../ports/message-log/message-log.port.ts';
import type { RequestContext } from './request-context.ts';

/** One event of the stream: its id (for `Last-Event-ID`) and the payload webhooks carry too. */
export interface StreamEvent {
  readonly id: string;
  readonly payload: NotificationPayload;
}

export interface EventStreamRequest {
  /** Only these types (default: all). */
  readonly types?: readonly string[];
  readonly documentId?: string;
  /** Resume after this event (the `Last-Event-ID` of a reconnecting client). */
  readonly lastEventId?: string;
  /** Called for each event, one at a time; a rejection ends the stream. */
  send(event: StreamEvent): Promise<void>;
  /** Called once if the stream ends by itself (the log could not be read). */
  onEnd(error: unknown): void;
}

export interface EventStreamService {
  /**
   * Follows the notification topic for the caller's workspace: from now on, or from the event
   * `lastEventId` names. Rejects a malformed `lastEventId` or unknown type with `bad-request`.
   */
  open(ctx: RequestContext, request: EventStreamRequest): Promise<Subscription>;
  /** How often an idle stream sends a comment line (`KB_EVENTS_HEARTBEAT_MS`). */
  readonly heartbeatMs: number;
}

/** `<ms since epoch the event was appended to the log>-<event id>`. */
const EVENT_ID = /^(\d{1,15})-([0-9a-f-]{36})$/;

export function streamEventId(appendedAtMs: number, eventId: string): string {
  return `${appendedAtMs}-${eventId}`;
}

/**
 * The live event stream behind `GET /api/v1/events`: one tail of the notification topic per
 * stream, filtered to the caller's workspace. Resuming from an event id starts the tail at the
 * instant that event was appended and skips that event: other events appended in the same
 * millisecond may come again (delivery is at-least-once; clients dedupe by id), and events the log
 * no longer retains are gone.
 */
export function createEventStreamService(deps: {
  readonly logTail: MessageLogTail;
  readonly topic: string;
  readonly heartbeatMs: number;
}): EventStreamService {
  return {
    heartbeatMs: deps.heartbeatMs,
    async open(ctx, request) {
      const unknown = (request.types ?? []).filter((t) => !(NOTIFICATION_TYPES as readonly string[]).includes(t));
      if (unknown.length > 0) {
        throw new KbError(
          'bad-request',
          `Unknown event types: ${unknown.join(', ')}. Known: ${NOTIFICATION_TYPES.join(', ')}.`,
        );
      }
      let sinceMs: number | undefined;
      let skipId: string | null = null;
      if (request.lastEventId !== undefined && request.lastEventId !== '') {
        const match = EVENT_ID.exec(request.lastEventId.trim());
        if (!match) {
          throw new KbError(
            'bad-request',
            'Last-Event-ID is not an id this stream sent (`<milliseconds>-<event id>`).',
          );
        }
        sinceMs = Number(match[1]);
        skipId = match[2] ?? null;
      }
      const types = request.types && request.types.length > 0 ? new Set(request.types) : null;
      return deps.logTail.tail({
        topic: deps.topic,
        ...(sinceMs === undefined ? {} : { sinceMs }),
        onEnd: request.onEnd,
        async handler(message) {
          const notification = notificationFromRecord(message.value);
          if (notification.workspaceId !== ctx.workspaceId) return;
          if (notification.id === skipId) return;
          if (types && !types.has(notification.payload.type)) return;
          if (request.documentId !== undefined && notification.subject !== request.documentId) return;
          await request.send({ id: streamEventId(message.timestamp, notification.id), payload: notification.payload });
        },
      });
    },
  };
}
