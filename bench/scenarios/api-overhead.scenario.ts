/**
 * API overhead: autocannon (50 connections) against a `kb serve --stages none` child process —
 * `GET /health/live` (no authentication, no store) against an authenticated
 * `GET /api/v1/documents?limit=20` over 1,000 documents (`--api-docs`), and a bare Fastify route in a process of
 * its own (`bench/peers/bare-fastify.server.mjs`) as the ceiling. Each request of every run
 * carries an API key, taken in turn from 100 keys so no key reaches its plan's rate limit
 * (10,000 a minute).
 */
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type ChildService, startChild, stopChild } from '../../support/child-service.ts';
import type { BenchContext } from '../lib/context.ts';
import { type PeerServer, startPeerServer } from '../lib/peer-server.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, openInstance } from '../lib/service.ts';
import { baseVectors, writeSyntheticChunks } from '../lib/synthetic.ts';
import type { Target } from '../lib/target.ts';

const CONNECTIONS = 50;
const KEYS = 100;
const PAGE = 20;
const BARE_FASTIFY = fileURLToPath(new URL('../peers/bare-fastify.server.mjs', import.meta.url));

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
  const documents = ctx.options.apiDocuments;
  const row = createRow('API overhead', target.runtime, `${documents} docs`);
  const instance = await target.fresh();
  try {
    const open = await openInstance(instance, { embeddings: ctx.provider, keys: KEYS });
    let child: ChildService | null = null;
    let bareServer: PeerServer | null = null;
    try {
      ctx.progress(`API overhead (${target.runtime}): writing ${documents} documents`);
      const store = open.runtime.ports.documents;
      await writeSyntheticChunks(store, {
        workspaceId: open.workspaceId,
        chunks: documents,
        perDocument: 1,
        model: ctx.provider,
        base: await baseVectors(ctx.provider, ctx.vectors.values(), 8, ctx.options.seed),
        seed: ctx.options.seed,
      });
      child = await startChild(['serve', '--stages', 'none'], childEnv(instance));
      const health = `${child.url}/health/live`;
      const list = `${child.url}/api/v1/documents?limit=${PAGE}`;
      bareServer = await startPeerServer(BARE_FASTIFY);
      const bare = `${bareServer.url}/hello`;
      const probe = await fetch(list, { headers: { 'x-api-key': open.keys[0] as string } });
      if (probe.status !== 200) throw new Error(`GET /documents answered ${probe.status}: ${await probe.text()}`);
      await probe.arrayBuffer();
      // Warm-up of both paths.
      await cannon(health, open.keys, 1);
      await cannon(list, open.keys, 1);
      await cannon(bare, open.keys, 1);

      // What the list endpoint asks of the store (cursor mode reads limit + 1), with as many callers, alone.
      const storeAlone = () =>
        throughput(ctx.options.apiSeconds / 2, CONNECTIONS, () =>
          store.listDocuments({ workspaceId: open.workspaceId, limit: PAGE + 1 }),
        );
      const storeOps: number[] = [];
      const healthRps: number[] = [];
      const healthP99: number[] = [];
      const authRps: number[] = [];
      const authP99: number[] = [];
      const bareRps: number[] = [];
      const bareP99: number[] = [];
      const ratio: number[] = [];
      const ofBare: number[] = [];
      let failures = 0;
      const seconds = ctx.options.apiSeconds;
      for (let round = 0; round < ctx.options.rounds; round++) {
        ctx.progress(`API overhead (${target.runtime}): round ${round + 1}`);
        // The order rotates from round to round so no run always follows the same one.
        const runs = [
          ['list', list],
          ['health', health],
          ['bare', bare],
        ] as const;
        const order = [...runs.slice(round % 3), ...runs.slice(0, round % 3)];
        const results = new Map<string, autocannon.Result>();
        for (const [name, url] of order) results.set(name, await cannon(url, open.keys, seconds));
        const a = results.get('list') as autocannon.Result;
        const h = results.get('health') as autocannon.Result;
        const b = results.get('bare') as autocannon.Result;
        for (const r of [a, h, b]) failures += r.non2xx + r.errors + r.timeouts;
        healthRps.push(h.requests.average);
        healthP99.push(h.latency.p99);
        authRps.push(a.requests.average);
        authP99.push(a.latency.p99);
        bareRps.push(b.requests.average);
        bareP99.push(b.latency.p99);
        ratio.push(a.requests.average / h.requests.average);
        ofBare.push(a.requests.average / b.requests.average);
        storeOps.push(await storeAlone());
      }
      addFigure(row, 'GET /health/live', 'req/s', healthRps);
      addFigure(row, 'GET /health/live p99', 'ms', healthP99);
      addFigure(row, 'bare Fastify route', 'req/s', bareRps);
      addFigure(row, 'bare Fastify route p99', 'ms', bareP99);
      addFigure(row, `GET /documents?limit=${PAGE} (key)`, 'req/s', authRps);
      addFigure(row, `GET /documents?limit=${PAGE} p99`, 'ms', authP99);
      judge(addFigure(row, 'authenticated ÷ health', 'ratio', ratio), {
        atLeast: target.runtime === 'distributed' ? 0.3 : 0.5,
      });
      if (target.runtime === 'embedded') {
        judge(addFigure(row, 'authenticated ÷ bare Fastify', 'ratio', ofBare), { atLeast: 0.3 });
      } else {
        addFigure(row, 'authenticated ÷ bare Fastify', 'ratio', ofBare);
      }
      addFigure(row, `store listDocuments alone, ${CONNECTIONS} callers`, 'calls/s', storeOps);
      row.notes.push(
        `autocannon ${CONNECTIONS} connections, ${seconds} s a run, from this process to kb serve and to a bare Fastify server, each in its own process; ` +
          `${KEYS} keys in turn (each request of every run carries one); ${failures} non-2xx responses or errors in all runs; ` +
          'the store figure is the document store port called directly from this process with the same query, the child idle',
      );
    } finally {
      if (bareServer) await bareServer.stop();
      if (child) await stopChild(child);
      await open.close();
    }
  } finally {
    await instance.cleanup();
  }
  return row;
}
