/**
 * Idle event streams: what 300 open `GET /api/v1/events` streams with nothing to tell cost a
 * `kb serve --stages none` child process (embedded runtime), and what they do to keyword search.
 *
 * Per round, with and without the streams (the order alternates by round): the child's CPU time
 * over a quiet window (user + system from `/proc/<pid>/stat`, so only the service's own process
 * counts), then keyword search latency from one client, one query at a time. The streams all come
 * from one key (its cap on concurrent streams raised for the run) and receive only heartbeats
 * (`KB_EVENTS_HEARTBEAT_MS` at its default). Goals: the streams' idle cost (CPU with them minus
 * without) ≤ 0.15 of a core, and search p50 with them ≤ 2× without.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildService, startChild, stopChild } from '../../support/child-service.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, cpuSecondsOf, createJsonClient, openInstance } from '../lib/service.ts';
import { latencies, timedPool } from '../lib/stats.ts';
import { baseVectors, writeSyntheticChunks } from '../lib/synthetic.ts';
import type { Target } from '../lib/target.ts';
import { zipfQueries, zipfVocabulary } from '../lib/zipf-corpus.ts';

const STREAMS = 300;
const CHUNKS = 20_000;

/** Seconds until the service's readiness no longer reports its keyword index as catching up. */
async function keywordIndexReady(url: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${url}/health/ready`);
    const body = (await response.json()) as { checks?: Record<string, { message?: string }> };
    if (!Object.values(body.checks ?? {}).some((check) => check.message?.includes('keyword index'))) return;
    await sleep(1000);
  }
}

/** Opens `count` event streams; each reads (and drops) what it is sent until closed. */
async function openStreams(url: string, key: string, count: number): Promise<{ close(): Promise<void> }> {
  const abort = new AbortController();
  const reading: Promise<void>[] = [];
  const open = async () => {
    const response = await fetch(`${url}/api/v1/events`, { headers: { 'x-api-key': key }, signal: abort.signal });
    if (response.status !== 200 || !response.body) {
      throw new Error(`the event stream answered ${response.status}: ${await response.text()}`);
    }
    const body = response.body;
    reading.push(
      (async () => {
        try {
          for await (const _ of body) {
            // heartbeats only
          }
        } catch {
          // closed
        }
      })(),
    );
  };
  try {
    // In tens, so the opening itself does not queue hundreds of requests at once.
    for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: Math.min(10, count - i) }, open));
  } catch (error) {
    abort.abort();
    throw error;
  }
  return {
    async close() {
      abort.abort();
      await Promise.all(reading);
    },
  };
}

/** Cores the process used over `seconds` of wall time. */
async function cpuOver(pid: number, seconds: number): Promise<number> {
  const before = await cpuSecondsOf(pid);
  const started = performance.now();
  await sleep(seconds * 1000);
  const after = await cpuSecondsOf(pid);
  if (before === null || after === null) throw new Error('kb serve exited during the CPU window');
  return (after - before) / ((performance.now() - started) / 1000);
}

export async function streamsScenario(ctx: BenchContext, target: Target): Promise<Row> {
  const row = createRow('streams, idle', target.runtime, `${STREAMS} streams, ${CHUNKS / 1000}k chunks`);
  const windowSeconds = ctx.options.quick ? 5 : 10;
  const instance = await target.fresh();
  let child: ChildService | null = null;
  try {
    const service = await openInstance(instance, { embeddings: ctx.provider, keys: 2 });
    const vocabulary = zipfVocabulary(ctx.options.seed);
    const queryTerms = zipfQueries(vocabulary, ctx.options.latencyQueries, ctx.options.seed);
    const queries = queryTerms.map((ranks) => ranks.map((rank) => vocabulary.terms[rank]).join(' '));
    try {
      ctx.progress(`streams (${target.runtime}): writing ${CHUNKS} synthetic chunks`);
      await writeSyntheticChunks(service.runtime.ports.documents, {
        workspaceId: service.workspaceId,
        chunks: CHUNKS,
        perDocument: 100,
        writers: 8,
        model: ctx.provider,
        base: await baseVectors(ctx.provider, ctx.vectors.values(), 16, ctx.options.seed),
        seed: ctx.options.seed,
        text: { vocabulary, queries: queryTerms },
      });
    } finally {
      await service.close();
    }
    const [streamKey, searchKey] = service.keys as [string, string];
    child = await startChild(
      ['serve', '--stages', 'none'],
      childEnv(instance, { KB_MAX_STREAMS_PER_KEY: String(STREAMS + 10) }),
    );
    const url = child.url;
    const pid = child.process.pid as number;
    await keywordIndexReady(url);

    const search = async () => {
      const http = createJsonClient(1);
      try {
        const run = await timedPool(queries, 1, async (query) => {
          const response = await http.post(
            `${url}/api/v1/search`,
            { query, mode: 'keyword', limit: 10 },
            { 'x-api-key': searchKey },
          );
          if (response.status !== 200) throw new Error(`search answered ${response.status}: ${response.body}`);
        });
        return latencies(run.durations).p50;
      } finally {
        http.close();
      }
    };
    // Warm-up: page cache, prepared statements, JIT.
    await search();

    const idleWithout: number[] = [];
    const idleWith: number[] = [];
    const cost: number[] = [];
    const p50Without: number[] = [];
    const p50With: number[] = [];
    const ratio: number[] = [];
    const measure = async (into: { idle: number[]; p50: number[] }) => {
      await sleep(2000);
      into.idle.push(await cpuOver(pid, windowSeconds));
      into.p50.push(await search());
    };
    for (let round = 0; round < ctx.options.rounds; round++) {
      ctx.progress(`streams (${target.runtime}): round ${round + 1} of ${ctx.options.rounds}`);
      const without = async () => measure({ idle: idleWithout, p50: p50Without });
      const withStreams = async () => {
        const streams = await openStreams(url, streamKey, STREAMS);
        try {
          await measure({ idle: idleWith, p50: p50With });
        } finally {
          await streams.close();
        }
      };
      if (round % 2 === 0) {
        await without();
        await withStreams();
      } else {
        await withStreams();
        await without();
      }
      cost.push((idleWith.at(-1) as number) - (idleWithout.at(-1) as number));
      ratio.push((p50With.at(-1) as number) / (p50Without.at(-1) as number));
    }
    addFigure(row, 'kb serve CPU, idle, no streams', 'cores', idleWithout);
    addFigure(row, `kb serve CPU, idle, ${STREAMS} streams`, 'cores', idleWith);
    judge(addFigure(row, `idle cost of ${STREAMS} streams (with − without)`, 'cores', cost), { atMost: 0.15 });
    addFigure(row, 'keyword search p50, no streams', 'ms', p50Without);
    addFigure(row, `keyword search p50, ${STREAMS} streams open`, 'ms', p50With);
    judge(addFigure(row, 'search p50 with ÷ without streams', 'ratio', ratio), { atMost: 2 });
    row.notes.push(
      `kb serve --stages none in its own process; ${STREAMS} streams of one key (KB_MAX_STREAMS_PER_KEY raised for the run), heartbeats at the default interval; ` +
        `CPU = the process's user + system time (/proc/<pid>/stat) over ${windowSeconds} s of quiet after 2 s of settling; ` +
        `then ${queries.length} keyword queries from one client, one at a time, over ${CHUNKS} synthetic chunks; the two phases' order alternates by round`,
    );
    return row;
  } finally {
    if (child) await stopChild(child);
    await instance.cleanup();
  }
}
