/**
 * A Server-Sent Events client for tests: `fetch` with a streamed body, parsed by
 * `eventsource-parser` (an independent implementation of the format). Records every event and
 * every comment line (heartbeats).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface StreamedEvent {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface EventStreamClient {
  readonly status: number;
  readonly contentType: string;
  readonly events: StreamedEvent[];
  readonly comments: string[];
  /** Resolves once the server ended the stream. */
  readonly ended: Promise<void>;
  waitFor(predicate: (events: StreamedEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * Opens `GET /api/v1/events` with `key` as X-API-Key, or with no key (`null`) and whatever
 * `headers` carry instead (a dashboard session's cookie).
 */
export async function openEventStream(
  url: string,
  key: string | null,
  options: {
    readonly lastEventId?: string;
    readonly query?: string;
    readonly headers?: Readonly<Record<string, string>>;
  } = {},
): Promise<EventStreamClient> {
  const abort = new AbortController();
  const response = await fetch(`${url}/api/v1/events${options.query ? `?${options.query}` : ''}`, {
    headers: {
      ...(key === null ? {} : { 'X-API-Key': key }),
      ...options.headers,
      accept: 'text/event-stream',
      ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}),
    },
    signal: abort.signal,
  });
  const events: StreamedEvent[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      events.push({ id: message.id, event: message.event, data: JSON.parse(message.data) }),
    onComment: (comment) => comments.push(comment),
  });
  const ended = (async () => {
    if (!response.body || response.status !== 200) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Aborted by close().
    }
  })();
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    events,
    comments,
    ended,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) {
          throw new Error(
            `the stream did not bring what was expected within ${timeoutMs} ms: ${JSON.stringify(events)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close() {
      abort.abort();
    },
  };
}
