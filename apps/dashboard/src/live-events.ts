/**
 * The workspace's live event stream (`GET /api/v1/events`, Server-Sent Events), one per tab, shared
 * by the pages: they refresh what an event changed instead of polling. `EventSource` sends the
 * session cookie but no headers, so the workspace travels in the `workspace` parameter (honoured for
 * dashboard sessions only). The browser reconnects by itself after a network error, sending
 * `Last-Event-ID`, and the stream resumes after the last event seen; a stream refused for good (an
 * error answer) is opened again after {@link REOPEN_MS}, from the last event seen. While the stream is
 * not open, pages fall back to a slow poll ({@link FALLBACK_POLL_MS}).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { NotificationType } from '../../../core/events/notifications.ts';

/** Every event type of the stream, with what it tells (a type the service adds must be added here). */
export const EVENT_DESCRIPTIONS: Readonly<Record<NotificationType, string>> = {
  'document.version.completed': 'a version is ingested and searchable',
  'document.version.failed': 'a version failed to ingest',
  'document.deleted': 'a document is deleted',
  'document.purged': 'a document is purged',
  'source.sync.completed': 'a sync run of a source completed',
  'source.sync.failed': 'a sync run of a source failed',
};
export const EVENT_TYPES = Object.keys(EVENT_DESCRIPTIONS) as NotificationType[];

export interface LiveEvent {
  readonly id: string;
  readonly type: NotificationType;
  readonly timestamp: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** `connecting` until the stream opens; `down` after it failed, until it opens again. */
export type LiveStatus = 'connecting' | 'live' | 'down';

/** How often pages refresh while the stream is not open. */
export const FALLBACK_POLL_MS = 30_000;
/** How long after the service refused the stream a new one is opened. */
const REOPEN_MS = 30_000;

/** `null` tells a listener the stream (re)opened: what happened before may have been missed. */
type Listener = (event: LiveEvent | null) => void;

const listeners = new Set<Listener>();
const statusListeners = new Set<(status: LiveStatus) => void>();
let status: LiveStatus = 'connecting';

function setStatus(next: LiveStatus): void {
  if (next === status) return;
  status = next;
  for (const l of statusListeners) l(next);
}

function notify(event: LiveEvent | null): void {
  for (const l of [...listeners]) l(event);
}

/**
 * Opens the stream of `workspace` for this tab; the returned function closes it (sign-out, another
 * workspace).
 */
export function connectLiveEvents(workspace: string): () => void {
  let source: EventSource | null = null;
  let reopen: ReturnType<typeof setTimeout> | undefined;
  let lastId = '';
  let closed = false;

  const open = () => {
    const query = new URLSearchParams({ workspace });
    if (lastId) query.set('last_event_id', lastId);
    const es = new EventSource(`/api/v1/events?${query}`);
    source = es;
    es.onopen = () => {
      setStatus('live');
      notify(null);
    };
    es.onerror = () => {
      setStatus('down');
      // CONNECTING: the browser retries by itself. CLOSED: the service refused; try again later.
      if (es.readyState === EventSource.CLOSED && !closed) {
        source = null;
        reopen = setTimeout(open, REOPEN_MS);
      }
    };
    for (const type of EVENT_TYPES) {
      es.addEventListener(type, (message: MessageEvent<string>) => {
        if (message.lastEventId) lastId = message.lastEventId;
        let payload: { timestamp?: string; data?: Record<string, unknown> };
        try {
          payload = JSON.parse(message.data);
        } catch {
          return;
        }
        notify({ id: message.lastEventId, type, timestamp: payload.timestamp ?? '', data: payload.data ?? {} });
      });
    }
  };

  setStatus('connecting');
  open();
  return () => {
    closed = true;
    clearTimeout(reopen);
    source?.close();
    source = null;
    setStatus('connecting');
  };
}

/** The stream's status, kept current. */
export function useLiveStatus(): LiveStatus {
  const [current, setCurrent] = useState(status);
  useEffect(() => {
    setCurrent(status);
    statusListeners.add(setCurrent);
    return () => {
      statusListeners.delete(setCurrent);
    };
  }, []);
  return current;
}

/**
 * Calls `refresh` when an event `accepts` arrives (events within `coalesceMs` make one refresh),
 * when the stream (re)opens, and every {@link FALLBACK_POLL_MS} while it is not open. Returns the
 * stream's status.
 */
export function useLiveRefresh(
  accepts: (event: LiveEvent) => boolean,
  refresh: () => void,
  coalesceMs = 200,
): LiveStatus {
  const current = useLiveStatus();
  const latest = useRef({ accepts, refresh });
  latest.current = { accepts, refresh };

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const listener: Listener = (event) => {
      if (event !== null && !latest.current.accepts(event)) return;
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        latest.current.refresh();
      }, coalesceMs);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      clearTimeout(timer);
    };
  }, [coalesceMs]);

  useEffect(() => {
    if (current === 'live') return;
    const timer = setInterval(() => latest.current.refresh(), FALLBACK_POLL_MS);
    return () => clearInterval(timer);
  }, [current]);

  return current;
}

/** Whether an event is about documents or sources (what lists of documents show). */
export const isDocumentOrSourceEvent = (event: LiveEvent): boolean =>
  event.type.startsWith('document.') || event.type.startsWith('source.sync.');
