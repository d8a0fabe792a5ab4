/**
 * Notifications: documents uploaded at 50 a second to a service running the whole pipeline and the
 * webhook dispatcher in one process; a loopback receiver takes the signed webhooks and an SSE
 * client follows `GET /api/v1/events`. The figures are how long after a version's `completed_at`
 * (the event's `timestamp`) its `document.version.completed` reached each of them, as p95 over
 * the documents of a round that completed. Goals (issue 24): webhook ≤ 1 s p95, SSE ≤ 500 ms p95.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createParser } from 'eventsource-parser';
import { startServer } from '../../apps/api/server.ts';
import { createRuntime } from '../../core/runtime/runtime.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { collectingLogger, createKeys } from '../lib/service.ts';
import { quantile } from '../lib/stats.ts';
import type { Target } from '../lib/target.ts';

const RATE_PER_SECOND = 50;

interface Arrival {
  readonly documentId: string;
  /** Milliseconds after the version's `completed_at` (or the instant it failed). */
  readonly latencyMs: number;
  readonly completed: boolean;
}

/** What a settling event says, once per document (a failed document counts as settled but has no figure). */
function arrivalOf(body: string, at: number): Arrival | null {
  const event = JSON.parse(body) as { type: string; timestamp: string; data: { document_id?: string } };
  if (!event.type.startsWith('document.version.') || !event.data.document_id) return null;
  return {
    documentId: event.data.document_id,
    latencyMs: at - Date.parse(event.timestamp),
    completed: event.type === 'document.version.completed',
  };
}

/** Arrivals by document id. */
type Arrivals = Map<string, Arrival>;

async function startReceiver(arrivals: Arrivals) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const arrival = arrivalOf(body, Date.now());
      if (arrival && !arrivals.has(arrival.documentId)) arrivals.set(arrival.documentId, arrival);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function followStream(url: string, key: string, arrivals: Arrivals) {
  const abort = new AbortController();
  const response = await fetch(`${url}/api/v1/events?types=document.version.completed,document.version.failed`, {
    headers: { 'X-API-Key': key },
    signal: abort.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`the event stream answered ${response.status}`);
  const parser = createParser({
    onEvent(message) {
      const arrival = arrivalOf(message.data, Date.now());
      if (arrival && !arrivals.has(arrival.documentId)) arrivals.set(arrival.documentId, arrival);
    },
  });
  const body = response.body;
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed
    }
  })();
  return { close: () => abort.abort() };
}

/** One round: a fresh instance, `count` uploads at 50 a second; p95 of both latencies. */
async function round(
  ctx: BenchContext,
  target: Target,
  count: number,
): Promise<{ webhook: number; sse: number; failed: number }> {
  const instance = await target.fresh();
  const config = {
    ...instance.config,
    outbound: { allowPrivate: true },
    webhooks: { ...instance.config.webhooks, dispatch: true },
  };
  const runtime = await createRuntime(config, {
    stages: 'all',
    dispatchWebhooks: true,
    embeddings: ctx.provider,
    logger: collectingLogger(),
  });
  const hooks: Arrivals = new Map();
  const streamed: Arrivals = new Map();
  const receiver = await startReceiver(hooks);
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let stream: { close(): void } | undefined;
  try {
    server = await startServer({ config, services: runtime.services, version: runtime.version, logger: false });
    const [key] = await createKeys(runtime, 'bench-notifications', 1);
    if (!key) throw new Error('no key');
    const created = await fetch(`${server.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['document.version.completed', 'document.version.failed'] }),
    });
    if (created.status !== 201) throw new Error(`creating the webhook answered ${created.status}`);
    stream = await followStream(server.url, key, streamed);

    const files = ctx.corpus.files.slice(0, count);
    const ids: string[] = [];
    const started = performance.now();
    await Promise.all(
      files.map(async (file, i) => {
        const due = started + (i * 1000) / RATE_PER_SECOND;
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
        const form = new FormData();
        form.append('file', new Blob([await readFile(file)]), path.basename(file));
        const res = await fetch(`${server?.url}/api/v1/documents`, {
          method: 'POST',
          headers: { 'X-API-Key': key },
          body: form,
        });
        const body = (await res.json()) as { document_id?: string };
        if (res.status !== 201 || !body.document_id) throw new Error(`upload answered ${res.status}`);
        ids.push(body.document_id);
      }),
    );
    const deadline = Date.now() + 600_000;
    while (ids.some((id) => !hooks.has(id) || !streamed.has(id))) {
      if (Date.now() > deadline) throw new Error('not every document settled within 10 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const p95 = (arrivals: Arrivals) =>
      quantile(
        ids.flatMap((id) => {
          const arrival = arrivals.get(id);
          return arrival?.completed ? [arrival.latencyMs] : [];
        }),
        0.95,
      );
    const failed = ids.filter((id) => !hooks.get(id)?.completed).length;
    return { webhook: p95(hooks), sse: p95(streamed), failed };
  } finally {
    stream?.close();
    await server?.close();
    await receiver.close();
    await runtime.close();
    await instance.cleanup();
  }
}

export async function notificationsScenario(ctx: BenchContext, target: Target): Promise<Row> {
  const count = Math.min(ctx.corpus.files.length, ctx.options.quick ? 50 : 100);
  const row = createRow('notifications', target.runtime, `${count} docs at ${RATE_PER_SECOND}/s`);
  const webhook: number[] = [];
  const sse: number[] = [];
  for (let i = 0; i < ctx.options.rounds; i++) {
    ctx.progress(`notifications (${target.runtime}): round ${i + 1} of ${ctx.options.rounds}`);
    const result = await round(ctx, target, count);
    webhook.push(result.webhook);
    sse.push(result.sse);
    if (result.failed > 0) row.notes.push(`round ${i + 1}: ${result.failed} documents failed ingestion (no figure)`);
  }
  judge(addFigure(row, 'webhook delivered after completed_at, p95', 'ms', webhook), { atMost: 1000 });
  judge(addFigure(row, 'SSE event after completed_at, p95', 'ms', sse), { atMost: 500 });
  row.notes.push('whole pipeline + dispatcher in one process; loopback receiver answering 204 at once; one SSE client');
  return row;
}
