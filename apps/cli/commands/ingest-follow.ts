import path from 'node:path';
import { createParser } from 'eventsource-parser';
import { sleep } from '../../../core/util/time.ts';
import { progressBar } from './progress.ts';

export interface FollowTarget {
  readonly base: string;
  readonly key: string;
}

type Outcome = { readonly status: 'completed' } | { readonly status: 'failed'; readonly reason: string };

/** A poll round every this often while the event stream is open (catches what it could not tell). */
const POLL_WITH_STREAM_MS = 10_000;
/** Without the stream (older service, key without read permission): polls this often. */
const POLL_WITHOUT_STREAM_MS = 500;

/**
 * Opens `GET /api/v1/events` for the settling events of documents and calls `onEvent` for each;
 * resolves with a closer, or null when the stream cannot be had (the caller polls instead).
 */
async function openSettlingStream(
  target: FollowTarget,
  onEvent: (documentId: string, outcome: Outcome) => void,
): Promise<{ close(): void } | null> {
  const abort = new AbortController();
  const types = 'document.version.completed,document.version.failed,document.deleted,document.purged';
  let response: Response;
  try {
    response = await fetch(`${target.base}/api/v1/events?types=${types}`, {
      headers: { 'X-API-Key': target.key, accept: 'text/event-stream' },
      signal: abort.signal,
    });
  } catch {
    return null;
  }
  if (response.status !== 200 || !response.body) {
    abort.abort();
    return null;
  }
  const parser = createParser({
    onEvent(message) {
      const event = JSON.parse(message.data) as {
        type: string;
        data: { document_id?: string; error?: { code?: string } };
      };
      const id = event.data.document_id;
      if (!id) return;
      if (event.type === 'document.version.completed') onEvent(id, { status: 'completed' });
      else if (event.type === 'document.version.failed') {
        onEvent(id, { status: 'failed', reason: `ingestion failed (${event.data.error?.code ?? 'unknown'})` });
      } else onEvent(id, { status: 'failed', reason: 'deleted while it was being processed' });
    },
  });
  const body = response.body;
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Closed, or the connection dropped: the poll rounds go on.
    }
  })();
  return { close: () => abort.abort() };
}

/** Asks the service once for the document's status; null while it is still on its way (or no answer). */
async function poll(target: FollowTarget, id: string): Promise<Outcome | null> {
  const response = await fetch(`${target.base}/api/v1/documents/${id}`, {
    headers: { 'X-API-Key': target.key },
  }).catch(() => null);
  if (response === null) return null;
  if (response.status === 429) {
    await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000);
    return null;
  }
  const doc = (await response.json().catch(() => ({}))) as { status?: string; error?: { code: string } | null };
  if (response.status === 404) return { status: 'failed', reason: 'deleted while it was being processed' };
  if (doc.status === 'completed') return { status: 'completed' };
  if (doc.status === 'failed')
    return { status: 'failed', reason: `ingestion failed (${doc.error?.code ?? 'unknown'})` };
  return null;
}

/**
 * Follows every uploaded document until it is completed or failed, told by the event stream
 * (polling once at the start for what settled before it opened, and every 10 s as a safety net),
 * or by polling alone when the stream cannot be opened. Failures join `failed`.
 */
export async function followDocuments(
  uploaded: ReadonlyArray<{ readonly file: string; readonly document_id: string }>,
  target: FollowTarget,
  failed: Array<{ file: string; reason: string }>,
): Promise<{ completed: number; failed: number }> {
  const waiting = progressBar('Processing');
  waiting.start(uploaded.length);
  const pending = new Map(uploaded.map((u) => [u.document_id, u.file]));
  let completed = 0;
  let failures = 0;
  let wake: () => void = () => {};
  const settle = (id: string, outcome: Outcome) => {
    const file = pending.get(id);
    if (file === undefined) return;
    pending.delete(id);
    if (outcome.status === 'completed') completed++;
    else {
      failures++;
      failed.push({ file, reason: outcome.reason });
    }
    waiting.increment(path.basename(file));
    if (pending.size === 0) wake();
  };
  const stream = await openSettlingStream(target, settle);
  try {
    while (pending.size > 0) {
      for (const id of [...pending.keys()]) {
        const outcome = await poll(target, id);
        if (outcome) settle(id, outcome);
      }
      if (pending.size === 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, stream ? POLL_WITH_STREAM_MS : POLL_WITHOUT_STREAM_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    stream?.close();
    waiting.stop();
  }
  return { completed, failed: failures };
}
