/**
 * API overhead: autocannon (50 connections) against a `kb serve --stages none` child process —
 * `GET /health/live` (no authentication, no store) against an authenticated
 * `GET /api/v1/documents?limit=1` over 1,000 documents. Each request of both runs carries an API
 * key, taken in turn from 100 keys so no key reaches its plan's rate limit (10,000 a minute).
 */
import autocannon from 'autocannon';
import { type ChildService, startChild, stopChild } from '../../tests/support/child-service.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, openInstance } from '../lib/service.ts';
import { baseVectors, writeSyntheticChunks } from '../lib/synthetic.ts';
import type { Target } from '../lib/target.ts';

const CONNECTIONS = 50;
const KEYS = 100;
const DOCUMENTS = 1000;

/** Calls `op` from `concurrency` callers for `seconds`; returns completed calls per second. */
async function throughput(seconds: number, concurrency: number, op: () => Promise<unknown>): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await op();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function cannon(url: string, keys: readonly string[], seconds: number): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, 'x-api-key': keys[next++ % keys.length] as string },
        }),
      },
    ],
  });
}

export async function apiOverhead(ctx: BenchContext, target: Target): Promise<Row> {
  const row = createRow('API overhead', target.runtime, `${DOCUMENTS} docs`);
  const instance = await target.fresh();
  try {
    const open = await openInstance(instance, { embeddings: ctx.provider, keys: KEYS });
    let child: ChildService | null = null;
    try {
      ctx.progress(`API overhead (${target.runtime}): writing ${DOCUMENTS} documents`);
      const store = open.runtime.ports.documents;
      await writeSyntheticChunks(store, {
        workspaceId: open.workspaceId,
        chunks: DOCUMENTS,
        perDocument: 1,
        model: ctx.provider,
        base: await baseVectors(ctx.provider, ctx.vectors.values(), 8, ctx.options.seed),
        seed: ctx.options.seed,
      });
      child = await startChild(['serve', '--stages', 'none'], childEnv(instance));
      const health = `${child.url}/health/live`;
      const list = `${child.url}/api/v1/documents?limit=1`;
      const probe = await fetch(list, { headers: { 'x-api-key': open.keys[0] as string } });
      if (probe.status !== 200) throw new Error(`GET /documents answered ${probe.status}: ${await probe.text()}`);
      await probe.arrayBuffer();
      // Warm-up of both paths.
      await cannon(health, open.keys, 1);
      await cannon(list, open.keys, 1);

      // What the list endpoint asks of the store (cursor mode reads limit + 1), with as many callers, alone.
      const storeAlone = () =>
        throughput(ctx.options.apiSeconds / 2, CONNECTIONS, () =>
          store.listDocuments({ workspaceId: open.workspaceId, limit: 2 }),
        );
      const storeOps: number[] = [];
      const healthRps: number[] = [];
      const healthP99: number[] = [];
      const authRps: number[] = [];
      const authP99: number[] = [];
      const ratio: number[] = [];
      let failures = 0;
      for (let round = 0; round < ctx.options.rounds; round++) {
        ctx.progress(`API overhead (${target.runtime}): round ${round + 1}`);
        const authFirst = round % 2 === 1;
        const a1 = authFirst ? await cannon(list, open.keys, ctx.options.apiSeconds) : null;
        const h = await cannon(health, open.keys, ctx.options.apiSeconds);
        const a = a1 ?? (await cannon(list, open.keys, ctx.options.apiSeconds));
        failures += h.non2xx + h.errors + h.timeouts + a.non2xx + a.errors + a.timeouts;
        healthRps.push(h.requests.average);
        healthP99.push(h.latency.p99);
        authRps.push(a.requests.average);
        authP99.push(a.latency.p99);
        ratio.push(a.requests.average / h.requests.average);
        storeOps.push(await storeAlone());
      }
      addFigure(row, 'GET /health/live', 'req/s', healthRps);
      addFigure(row, 'GET /health/live p99', 'ms', healthP99);
      addFigure(row, 'GET /documents?limit=1 (key)', 'req/s', authRps);
      addFigure(row, 'GET /documents?limit=1 p99', 'ms', authP99);
      judge(addFigure(row, 'authenticated ÷ health', 'ratio', ratio), { atLeast: 0.5 });
      addFigure(row, `store listDocuments alone, ${CONNECTIONS} callers`, 'calls/s', storeOps);
      row.notes.push(
        `autocannon ${CONNECTIONS} connections, ${ctx.options.apiSeconds} s a run, from this process to kb serve in its own process; ` +
          `${KEYS} keys in turn (each request of both runs carries one); ${failures} non-2xx responses or errors in all runs; ` +
          'the store figure is the document store port called directly from this process with the same query, the child idle',
      );
    } finally {
      if (child) await stopChild(child);
      await open.close();
    }
  } finally {
    await instance.cleanup();
  }
  return row;
}
