/**
 * Backpressure: a client that uploads ten times faster than the pipeline drains, against `kb
 * serve` (every stage, the configured embedding model) with the ingestion backlog bounded
 * (`KB_MAX_BACKLOG_PER_WORKSPACE`) and, for comparison, unbounded. The client honours
 * `Retry-After` as `kb ingest` does; every upload is distinct prose (no vector is cached), so the
 * drain is the model's. Measured per run: files the API took per second, the backlog (read from
 * `/metrics` every half second), the growth of the data directory and of the message log, and
 * how often the client was refused (429) or the disk guard answered 507.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { startChild, stopChild } from '../../support/child-service.ts';
import { passage } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { createRandom } from '../lib/random.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';

const MB = 1e6;
/** The bounded run's `KB_MAX_BACKLOG_PER_WORKSPACE`. */
const BOUND = 50;
/** How long the client pushes in each run. */
const PUSH_SECONDS = 45;
/** Uploads the client has in flight at most (its pace is set by a rate, not by this). */
const CLIENT_CONCURRENCY = 16;
/** Documents that load the model in each process before anything is measured. */
const MODEL_WARM_UP_DOCS = 3;
/** Documents of the warm-up that measures the drain rate the client then outpaces tenfold. */
const WARM_UP_DOCS = 30;
const METRICS_TOKEN = 'bench-backpressure';
/** Uploads of the burst that measures how fast the API takes files while the pipeline is saturated. */
const BURST_DOCS = 160;

async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    total += (await stat(path.join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** Bytes of the embedded message log (its database and write-ahead log). */
async function logBytes(dataDir: string): Promise<number> {
  let total = 0;
  for (const name of ['log.db', 'log.db-wal']) {
    total += (await stat(path.join(dataDir, name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** Distinct markdown documents of three corpus passages each. */
function documents(seed: number): () => { name: string; text: string } {
  const rng = createRandom(seed);
  let n = 0;
  return () => {
    n += 1;
    const text = `# Note ${seed}-${n}\n\n${passage(rng)}\n\n${passage(rng)}\n\n${passage(rng)}\n`;
    return { name: `note-${seed}-${n}.md`, text };
  };
}

async function backlogOf(url: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await response.text();
  const line = /^kb_ingestion_backlog_overall (\S+)$/m.exec(text);
  return line ? Number(line[1]) : Number.NaN;
}

interface PushResult {
  readonly accepted: number;
  readonly refused: number;
  readonly insufficientStorage: number;
  readonly otherErrors: number;
  readonly retryAfter: number[];
  readonly maxBacklog: number;
  readonly endBacklog: number;
  readonly seconds: number;
}

/**
 * Pushes uploads at `rate` a second for {@link PUSH_SECONDS} with up to {@link CLIENT_CONCURRENCY}
 * in flight; a refused upload waits its `Retry-After` and is sent again (its slot stays taken).
 */
async function push(url: string, key: string, rate: number, next: () => { name: string; text: string }) {
  const started = performance.now();
  const deadline = started + PUSH_SECONDS * 1000;
  let accepted = 0;
  let refused = 0;
  let insufficientStorage = 0;
  let otherErrors = 0;
  const retryAfter: number[] = [];
  let maxBacklog = 0;
  let sent = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const backlog = await backlogOf(url).catch(() => Number.NaN);
      if (!Number.isNaN(backlog)) maxBacklog = Math.max(maxBacklog, backlog);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  const worker = async () => {
    while (performance.now() < deadline) {
      // The pace: upload number `sent` is due `sent / rate` seconds after the start.
      const due = started + (sent / rate) * 1000;
      sent += 1;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      const doc = next();
      while (performance.now() < deadline) {
        const form = new FormData();
        form.append('file', new Blob([doc.text], { type: 'text/markdown' }), doc.name);
        const response = await fetch(`${url}/api/v1/documents`, {
          method: 'POST',
          headers: { 'X-API-Key': key },
          body: form,
        }).catch(() => null);
        await response?.arrayBuffer();
        if (response?.status === 201) {
          accepted += 1;
          break;
        }
        if (response?.status === 429 || response?.status === 503) {
          refused += 1;
          const seconds = Number(response.headers.get('retry-after') ?? '1');
          retryAfter.push(seconds);
          await new Promise((resolve) => setTimeout(resolve, Math.min(seconds * 1000, deadline - performance.now())));
          continue;
        }
        if (response?.status === 507) insufficientStorage += 1;
        else otherErrors += 1;
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  const endBacklog = await backlogOf(url);
  return {
    accepted,
    refused,
    insufficientStorage,
    otherErrors,
    retryAfter,
    maxBacklog: Math.max(maxBacklog, endBacklog),
    endBacklog,
    seconds,
  } satisfies PushResult;
}

/** Starts `kb serve` on a fresh instance with the bounds given; resolves its URL, key, data dir and a stop. */
async function serve(target: Target, bounds: { perWorkspace: number; total: number }) {
  const instance = await target.fresh();
  const child = await startChild(
    ['serve'],
    childEnv(instance, {
      KB_BOOTSTRAP_KEY: 'true',
      KB_METRICS_TOKEN: METRICS_TOKEN,
      KB_MAX_CONCURRENT_UPLOADS: String(CLIENT_CONCURRENCY),
      KB_MAX_BACKLOG_PER_WORKSPACE: String(bounds.perWorkspace),
      KB_MAX_BACKLOG: String(bounds.total),
    }),
    { timeoutMs: 180_000 },
  ).catch(async (error: unknown) => {
    await instance.cleanup();
    throw error;
  });
  const key = /ink_[A-Za-z0-9]{32,}/.exec(child.output())?.[0];
  const stop = async () => {
    await stopChild(child);
    await instance.cleanup();
  };
  if (!key) {
    await stop();
    throw new Error(`kb serve printed no bootstrap key:\n${child.output()}`);
  }
  return { url: child.url, key, dataDir: instance.config.dataDir, stop };
}

/** Uploads `count` documents and waits until the backlog is empty: versions completed per second. */
async function measureDrain(url: string, key: string, count: number, next: () => { name: string; text: string }) {
  const started = performance.now();
  await burst(url, key, count, next);
  const deadline = Date.now() + 300_000;
  while ((await backlogOf(url)) > 0) {
    if (Date.now() > deadline) throw new Error('the warm-up documents were not ingested within 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return count / ((performance.now() - started) / 1000);
}

/** Uploads `count` documents, {@link CLIENT_CONCURRENCY} at a time, as fast as they are taken: files per second. */
async function burst(url: string, key: string, count: number, next: () => { name: string; text: string }) {
  const started = performance.now();
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left -= 1;
      const doc = next();
      const form = new FormData();
      form.append('file', new Blob([doc.text], { type: 'text/markdown' }), doc.name);
      const response = await fetch(`${url}/api/v1/documents`, {
        method: 'POST',
        headers: { 'X-API-Key': key },
        body: form,
      });
      await response.arrayBuffer();
      if (response.status !== 201) throw new Error(`upload answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CLIENT_CONCURRENCY, count) }, worker));
  return count / ((performance.now() - started) / 1000);
}

export async function backpressureScenario(ctx: BenchContext, target: Target): Promise<Row> {
  const row = createRow('backpressure', target.runtime, `${PUSH_SECONDS} s at 10× the drain`);
  const runs: Record<'bounded' | 'unbounded', PushResult & { diskMB: number; logMB: number }> = {} as never;
  let drain = 0;
  let intake = 0;
  for (const kind of ['bounded', 'unbounded'] as const) {
    ctx.progress(`backpressure (${target.runtime}): ${kind} backlog`);
    const service = await serve(
      target,
      kind === 'bounded' ? { perWorkspace: BOUND, total: 0 } : { perWorkspace: 0, total: 0 },
    );
    try {
      const next = documents(ctx.options.seed + (kind === 'bounded' ? 1 : 2));
      // The model loads on the first documents of each process; the drain rate is measured once, after.
      await measureDrain(service.url, service.key, MODEL_WARM_UP_DOCS, next);
      if (drain === 0) drain = await measureDrain(service.url, service.key, WARM_UP_DOCS, next);
      const diskBefore = await bytesUnder(service.dataDir);
      const logBefore = await logBytes(service.dataDir);
      const result = await push(service.url, service.key, 10 * drain, next);
      runs[kind] = {
        ...result,
        diskMB: ((await bytesUnder(service.dataDir)) - diskBefore) / MB,
        logMB: ((await logBytes(service.dataDir)) - logBefore) / MB,
      };
      // Without a bound, the API's own pace with the pipeline saturated (the push left a backlog).
      if (kind === 'unbounded') intake = await burst(service.url, service.key, BURST_DOCS, next);
    } finally {
      await service.stop();
    }
  }
  const { bounded, unbounded } = runs;
  addFigure(row, 'drain rate (warm-up, 1 process)', 'docs/s', [drain]);
  addFigure(row, 'client pace asked', 'uploads/s', [10 * drain]);
  addFigure(row, 'upload acceptance, pipeline saturated (burst, 16 in flight)', 'files/s', [intake]);
  addFigure(row, 'uploads taken during the push, unbounded', 'files/s', [unbounded.accepted / unbounded.seconds]);
  addFigure(row, 'uploads taken during the push, bounded', 'files/s', [bounded.accepted / bounded.seconds]);
  addFigure(row, 'backlog at the end, unbounded', 'versions', [unbounded.endBacklog]);
  judge(addFigure(row, 'backlog peak ÷ bound, bounded', 'ratio', [bounded.maxBacklog / BOUND]), { atMost: 1.1 });
  addFigure(row, 'data directory growth, unbounded', 'MB', [unbounded.diskMB]);
  addFigure(row, 'data directory growth, bounded', 'MB', [bounded.diskMB]);
  addFigure(row, 'message log growth, unbounded', 'MB', [unbounded.logMB]);
  addFigure(row, 'message log growth, bounded', 'MB', [bounded.logMB]);
  addFigure(row, 'refusals (429) in the bounded run', 'count', [bounded.refused]);
  addFigure(row, 'Retry-After given, bounded (median of refusals)', 's', [median(bounded.retryAfter)]);
  judge(
    addFigure(row, '507 answers (both runs)', 'count', [bounded.insufficientStorage + unbounded.insufficientStorage]),
    {
      atMost: 0,
    },
  );
  row.notes.push(
    `kb serve (${target.runtime}, every stage, the configured embedding model) on a fresh instance per run; ` +
      `the drain rate is measured on ${WARM_UP_DOCS} distinct documents (after ${MODEL_WARM_UP_DOCS} that load the model), then one client with up to ${CLIENT_CONCURRENCY} uploads in flight ` +
      `paces distinct 3-passage markdown documents at 10× that rate for ${PUSH_SECONDS} s, honouring Retry-After (a refused upload waits and is sent again); ` +
      `bounded: KB_MAX_BACKLOG_PER_WORKSPACE=${BOUND}; unbounded: 0. The backlog is read from /metrics every 0.5 s; ` +
      `growth is of the whole data directory and of log.db over the push; the acceptance burst is ${BURST_DOCS} more uploads, 16 in flight, after the unbounded push. Other errors: bounded ${bounded.otherErrors}, unbounded ${unbounded.otherErrors}. One round.`,
  );
  return row;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
