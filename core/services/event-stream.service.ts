import { KbError } from '../errors/kb-error.ts';
import {
  NOTIFICATION_TYPES,
  type Notification,
  type NotificationPayload,
  notificationFromRecord,
} from '../events/notifications.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { DeliveredMessage, MessageLogTail, Subscription } from '../ports/message-log/message-log.port.ts';
import { versionVisible } from './access-rules.ts';
import { documentFacts } from './document-access.ts';
import { createNotificationFanOut } from './event-fan-out.ts';
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
  /** Called once if the stream ends by itself (the log could not be read, or the client fell too far behind). */
  onEnd(error: unknown): void;
}

export interface EventStreamService {
  /**
   * Follows the notification topic for the caller's workspace: from now on, or from the event
   * `lastEventId` names. Rejects a malformed `lastEventId` or unknown type with `bad-request`, and
   * a caller (key or dashboard account) already holding `maxStreamsPerKey` streams in this process
   * with `too-many-streams`; `stop()` (or the stream's end) frees its place.
   */
  open(ctx: RequestContext, request: EventStreamRequest): Promise<Subscription>;
  /** How often an idle stream sends a comment line (`KB_EVENTS_HEARTBEAT_MS`). */
  readonly heartbeatMs: number;
  /** Stops reading the log (the process is closing); later opens are refused. */
  close(): Promise<void>;
}

export interface EventStreamDeps {
  readonly logTail: MessageLogTail;
  readonly topic: string;
  readonly heartbeatMs: number;
  /** Streams one caller may hold open at once (`KB_MAX_STREAMS_PER_KEY`). */
  readonly maxStreamsPerKey: number;
  /** How long the shared tail outlives the last stream (default 30 s). */
  readonly lingerMs?: number;
  /** Where a scoped caller's events are checked against its rules (none: a scoped caller sees no event). */
  readonly documents?: Pick<DocumentStore, 'getDocument' | 'getVersion'>;
}

/**
 * Whether a scoped caller may see an event: only events of documents, and only when the version
 * the event names passes the scope's rules (as document reads check them). A document purged
 * since, or an event without a version, is not shown.
 */
async function eventVisible(
  documents: EventStreamDeps['documents'],
  ctx: RequestContext,
  payload: NotificationPayload,
): Promise<boolean> {
  if (!ctx.scope) return true;
  if (!documents) return false;
  const data = payload.data;
  const documentId = data.document_id;
  const version = data.version;
  if (!payload.type.startsWith('document.') || typeof documentId !== 'string' || typeof version !== 'number') {
    return false;
  }
  const [facts, record] = await Promise.all([
    documentFacts(documents, ctx.workspaceId, documentId),
    documents.getVersion(documentId, version),
  ]);
  if (!facts || !record || record.workspaceId !== ctx.workspaceId) return false;
  return versionVisible(ctx.scope, {
    documentId,
    // A deleted document's source is no longer read from the store, but its event names it.
    source: facts.source ?? (typeof data.source === 'string' ? data.source : null),
    documentCreatedAt: facts.createdAt,
    mimeType: record.mimeType,
    metadata: record.metadata,
  });
}

/** `<ms since epoch the event was appended to the log>-<event id>`. */
const EVENT_ID = /^(\d{1,15})-([0-9a-f-]{36})$/;

/** Events a stream holds for a client that reads slower than they come; one more ends the stream (it resumes). */
const MAX_QUEUED = 1_000;
/** Live events a resuming stream holds while it reads the log's past; one more ends it (it resumes again). */
const MAX_HELD = 10_000;
/** Ids a resuming stream remembers of what it sent from the past, to skip them among the held live events. */
const MAX_SEEN = 10_000;
/** The `Retry-After` of a refused stream: a place frees only when a stream closes. */
const FULL_RETRY_AFTER_S = 30;

export function streamEventId(appendedAtMs: number, eventId: string): string {
  return `${appendedAtMs}-${eventId}`;
}

/**
 * The live event stream behind `GET /api/v1/events`. Every stream of the process reads one shared
 * tail of the notification topic (see `event-fan-out.ts`), which hands each stream its workspace's
 * events; the stream applies its own filters and queues for its client.
 *
 * Resuming from an event id starts a tail of its own at the instant that event was appended and
 * skips that event: the stream joins the shared tail first (holding what it hands over), reads the
 * past from its own tail until that tail is caught up (everything appended before it started),
 * stops it, then sends the held events it has not sent yet and goes on live. Nothing falls between
 * the two: what the shared tail read before the stream joined was appended before the own tail
 * started. Other events appended in the same millisecond as the resumed one may come again, and so
 * may an event around the switch (delivery is at-least-once; clients dedupe by id); events the log
 * no longer retains are gone.
 */
export function createEventStreamService(deps: EventStreamDeps): EventStreamService {
  const fanOut = createNotificationFanOut({
    logTail: deps.logTail,
    topic: deps.topic,
    lingerMs: deps.lingerMs ?? 30_000,
  });
  /** Open streams by caller (key id, or the dashboard account's id). */
  const openBy = new Map<string, number>();

  const take = (caller: string): (() => void) => {
    const held = openBy.get(caller) ?? 0;
    if (held >= deps.maxStreamsPerKey) {
      throw new KbError(
        'too-many-streams',
        `This key already holds ${held} open event streams, the most it may (KB_MAX_STREAMS_PER_KEY); close one before opening another.`,
        { retryAfter: FULL_RETRY_AFTER_S },
      );
    }
    openBy.set(caller, held + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const left = (openBy.get(caller) ?? 1) - 1;
      if (left > 0) openBy.set(caller, left);
      else openBy.delete(caller);
    };
  };

  return {
    heartbeatMs: deps.heartbeatMs,
    close: () => fanOut.close(),
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
      const accepts = (n: Notification) =>
        n.workspaceId === ctx.workspaceId &&
        n.id !== skipId &&
        (!types || types.has(n.payload.type)) &&
        (request.documentId === undefined ||
          (n.payload.type.startsWith('document.') && n.subject === request.documentId));
      const eventOf = (n: Notification, m: DeliveredMessage): StreamEvent => ({
        id: streamEventId(m.timestamp, n.id),
        payload: n.payload,
      });
      const free = take(ctx.keyId);

      let ended = false;
      let leave: (() => void) | null = null;
      let catchUp: Subscription | null = null;
      let stopping: Promise<void> = Promise.resolve();
      /** While resuming: live events wait in `held`; `seen` names the past events already sent. */
      let catchingUp = sinceMs !== undefined;
      const held: StreamEvent[] = [];
      const seen = new Set<string>();
      const queue: StreamEvent[] = [];
      let sending = false;
      let waiters: Array<() => void> = [];
      const settle = () => {
        const ready = waiters;
        waiters = [];
        for (const resolve of ready) resolve();
      };
      const flushed = () =>
        queue.length === 0 && !sending ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve));

      const finish = (error: unknown) => {
        if (ended) return;
        ended = true;
        leave?.();
        leave = null;
        const own = catchUp;
        catchUp = null;
        if (own) stopping = own.stop().catch(() => undefined);
        queue.length = 0;
        held.length = 0;
        seen.clear();
        settle();
        free();
        if (error !== null) request.onEnd(error);
      };
      // A scoped caller's events are checked one at a time, in order, as they are sent.
      const send = ctx.scope
        ? async (event: StreamEvent) => {
            if (await eventVisible(deps.documents, ctx, event.payload)) await request.send(event);
          }
        : request.send;
      const pump = async () => {
        sending = true;
        try {
          while (queue.length > 0 && !ended) await send(queue.shift() as StreamEvent);
        } catch (error) {
          finish(error);
        } finally {
          sending = false;
          settle();
        }
      };
      const enqueue = (event: StreamEvent) => {
        if (queue.length >= MAX_QUEUED) {
          finish(new Error(`the client fell more than ${MAX_QUEUED} events behind`));
          return;
        }
        queue.push(event);
        if (!sending) void pump();
      };

      const live = (n: Notification, m: DeliveredMessage) => {
        if (ended || !accepts(n)) return;
        if (!catchingUp) {
          enqueue(eventOf(n, m));
          return;
        }
        // Older than the resume point: the client has it already.
        if (sinceMs !== undefined && m.timestamp < sinceMs) return;
        if (held.length >= MAX_HELD) {
          finish(new Error(`more than ${MAX_HELD} events came while the stream read the past`));
          return;
        }
        held.push(eventOf(n, m));
      };
      const caughtUp = () => {
        if (ended || !catchingUp) return;
        catchingUp = false;
        const own = catchUp;
        catchUp = null;
        // Null when the tail is caught up before `tail()` returned it: stopped below, once it has.
        if (own) stopping = own.stop().catch(() => undefined);
        for (const event of held.splice(0)) if (!seen.has(event.id)) enqueue(event);
        seen.clear();
      };
      const past = async (message: DeliveredMessage) => {
        if (ended || !catchingUp || String(message.value.workspace_id) !== ctx.workspaceId) return;
        const n = notificationFromRecord(message.value);
        if (!accepts(n)) return;
        const event = eventOf(n, message);
        seen.add(event.id);
        if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value as string);
        enqueue(event);
        await flushed();
      };

      try {
        leave = await fanOut.join({ workspaceId: ctx.workspaceId, deliver: live, end: finish });
        if (sinceMs !== undefined && !ended) {
          const own = await deps.logTail.tail({
            topic: deps.topic,
            sinceMs,
            handler: past,
            onEnd: finish,
            onCaughtUp: caughtUp,
          });
          if (ended || !catchingUp) stopping = own.stop().catch(() => undefined);
          else catchUp = own;
        }
      } catch (error) {
        finish(null);
        throw error;
      }
      return {
        async stop() {
          finish(null);
          await stopping;
        },
      };
    },
  };
}
