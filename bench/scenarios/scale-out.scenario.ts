/**
 * Scale-out (distributed runtime): the same documents ingested with one, then two, `kb worker`
 * processes per stage (each process runs one stage, so every stage's consumer group has that many
 * members), uploads through a `kb serve --stages none` child. Afterwards every document's chunks
 * are read back: none may be missing (fewer than the version's chunk count, or fewer than the
 * embedded runtime made of the same file) and none duplicated (an index twice, or an unexpected id).
 */
import { STAGE_NAMES } from '../../core/events/events.ts';
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import { type ChildService, startChild, stopChild } from '../../support/child-service.ts';
import { startCohereFake } from '../../support/cohere-fake.ts';
import type { BenchContext } from '../lib/context.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { childEnv, openInstance, uploadFiles, waitForIngestion } from '../lib/service.ts';
import type { Target } from '../lib/target.ts';

interface ChunkCheck {
  readonly lost: number;
  readonly duplicated: number;
}

async function checkChunks(
  store: DocumentStore,
  workspaceId: string,
  expected: ReadonlyMap<string, number>,
): Promise<ChunkCheck> {
  let lost = 0;
  let duplicated = 0;
  for (let offset = 0; ; offset += 200) {
    const page = await store.listDocuments({ workspaceId, limit: 200, offset });
    for (const doc of page.documents) {
      const version = doc.latest;
      const { chunks, total } = await store.listChunks(doc.id, version.version, { afterIndex: -1, limit: 100_000 });
      const indexes = new Set(chunks.map((c) => c.index));
      duplicated += chunks.length - indexes.size;
      duplicated += chunks.filter((c) => c.id !== `${doc.id}:${version.version}:${c.index}`).length;
      const want = Math.max(version.chunkCount, expected.get(version.name) ?? 0);
      lost += Math.max(0, want - indexes.size, want - total);
    }
    if (page.documents.length < 200) break;
  }
  return { lost, duplicated };
}

/** How the workers embed: the configured provider, or a remote API (a loopback stand-in with network latency). */
interface Embedding {
  /** The workers' settings (embedding provider, and how many documents a worker takes at once). */
  readonly env: Record<string, string>;
  /** Chunk counts the embedded runtime made of the same files with the same chunking, when known. */
  readonly expected: ReadonlyMap<string, number>;
}

/**
 * Documents each run ingests before the timed ones, so every worker process has handled some
 * (about eight each with two workers per stage) and the figure is the processes' steady rate, not
 * their start: a fresh process runs its first documents through cold code, and two workers per
 * stage start twice as many processes for the same documents.
 */
const WARM_UP_DOCUMENTS = 16;

async function ingestWithWorkers(
  ctx: BenchContext,
  target: Target,
  files: readonly string[],
  warmUp: readonly string[],
  perStage: number,
  embedding: Embedding,
): Promise<{ docsPerS: number; check: ChunkCheck; failed: number }> {
  const instance = await target.fresh();
  const children: ChildService[] = [];
  try {
    const open = await openInstance(instance, { embeddings: ctx.provider, keys: 1 });
    try {
      for (const stage of STAGE_NAMES) {
        for (let i = 0; i < perStage; i++) {
          const worker = await startChild(['worker', '--stages', stage], childEnv(instance, embedding.env), {
            waitForHttp: false,
          });
          children.push(worker);
        }
      }
      const api = await startChild(['serve', '--stages', 'none'], childEnv(instance, embedding.env));
      children.push(api);
      // Workers print their line once they have joined their consumer groups.
      const deadline = Date.now() + 120_000;
      while (children.some((c) => c !== api && !c.output().includes('kb worker running'))) {
        if (Date.now() > deadline) throw new Error('workers did not start within 120 s');
        await new Promise((r) => setTimeout(r, 250));
      }
      await uploadFiles(api.url, open.keys, warmUp, 4);
      const warm = await waitForIngestion(open.runtime.ports.documents, open.workspaceId, warmUp.length, 600_000);
      const started = Date.now();
      await uploadFiles(api.url, open.keys, files, 4);
      // The last completion of all is a timed document's: the warm-up ones completed before `started`.
      const done = await waitForIngestion(
        open.runtime.ports.documents,
        open.workspaceId,
        warmUp.length + files.length,
        1_800_000,
      );
      const check = await checkChunks(open.runtime.ports.documents, open.workspaceId, embedding.expected);
      const timed = done.completed - warm.completed;
      return { docsPerS: timed / ((done.lastCompletedAt - started) / 1000), check, failed: done.failed };
    } finally {
      await Promise.allSettled(children.map((c) => stopChild(c)));
      await open.close();
    }
  } finally {
    await instance.cleanup();
  }
}

/** Latency of one call to the stand-in remote embedding API (about a nearby region's round trip plus the model). */
const REMOTE_LATENCY_MS = 150;

export async function scaleOut(ctx: BenchContext, target: Target): Promise<Row[]> {
  const configured = await scaleOutWith(ctx, target, 'configured', { env: {}, expected: ctx.chunkCounts });
  // A remote embedding API: the embed stage waits on the network instead of the machine's two
  // cores, so what a second worker per stage adds is not eaten by the model sharing those cores.
  const fake = await startCohereFake({ dimensions: 384 });
  fake.setLatency(REMOTE_LATENCY_MS);
  try {
    const env = {
      KB_EMBEDDING_PROVIDER: 'cohere',
      KB_COHERE_MODEL: 'embed-english-light-v3.0', // 384 dimensions, as the stand-in answers
      KB_COHERE_BASE_URL: fake.url,
      KB_COHERE_API_KEY: fake.token,
    };
    const remote = await scaleOutWith(ctx, target, 'remote', { env, expected: new Map() });
    // The same with each worker taking one document at a time (one partition, one key), as a
    // deployment that bounds what one process holds and scales by processes: a worker's own
    // concurrency, not the cores, is then what a second worker adds to.
    const single = { KB_KAFKA_PARTITION_CONCURRENCY: '1', KB_KAFKA_KEY_CONCURRENCY: '1' };
    const oneAtATime = await scaleOutWith(ctx, target, 'remote, one document at a time', {
      env: { ...env, ...single },
      expected: new Map(),
    });
    return [configured, remote, oneAtATime];
  } finally {
    await fake.close();
  }
}

async function scaleOutWith(
  ctx: BenchContext,
  target: Target,
  provider: 'configured' | 'remote' | 'remote, one document at a time',
  embedding: Embedding,
): Promise<Row> {
  // One document at a time per worker: the markdown notes of the corpus only, whose parsing and
  // chunking take little CPU, so the stages wait on their round trips rather than on the cores.
  const onlyNotes = provider === 'remote, one document at a time';
  const candidates = ctx.corpus.files.filter((_, i) => !onlyNotes || ctx.corpus.documents[i]?.kind === 'markdown');
  const count = Math.min(ctx.options.localDocs, candidates.length);
  const files = candidates.slice(0, count);
  const warmUp = candidates.slice(count, count + WARM_UP_DOCUMENTS);
  const label =
    provider === 'configured'
      ? `${count} docs`
      : provider === 'remote'
        ? `${count} docs, remote embedding API`
        : `${count} markdown docs, remote embedding API, 1 doc at a time per worker`;
  const row = createRow('scale-out', target.runtime, label);
  const one: number[] = [];
  const two: number[] = [];
  let lost = 0;
  let duplicated = 0;
  let failed = 0;
  // Four ingestions of the corpus already take minutes: at most two rounds.
  const rounds = Math.min(2, ctx.options.rounds);
  for (let round = 0; round < rounds; round++) {
    for (const perStage of round % 2 === 0 ? [1, 2] : [2, 1]) {
      ctx.progress(`scale-out (${label}): round ${round + 1}, ${perStage} worker process(es) per stage`);
      const result = await ingestWithWorkers(ctx, target, files, warmUp, perStage, embedding);
      (perStage === 1 ? one : two).push(result.docsPerS);
      lost += result.check.lost;
      duplicated += result.check.duplicated;
      failed += result.failed;
    }
  }
  addFigure(row, '1 worker process per stage', 'docs/s', one);
  addFigure(row, '2 worker processes per stage', 'docs/s', two);
  const ratio = addFigure(
    row,
    '2 ÷ 1 workers',
    'ratio',
    two.map((t, i) => t / (one[i] as number)),
  );
  // With the model on the same two cores, or with each worker handling many documents at once, the
  // stages are CPU-bound together and a second worker has no core to run on: the goal is judged where
  // a worker's own concurrency bounds it and its work waits on the network.
  if (provider === 'remote, one document at a time') judge(ratio, { atLeast: 1.5 });
  addFigure(row, 'chunks lost, all runs', 'chunks', [lost]);
  addFigure(row, 'chunks duplicated, all runs', 'chunks', [duplicated]);
  const how =
    provider === 'configured'
      ? 'the configured embedding provider'
      : `a remote embedding API (Cohere's wire format, a loopback stand-in answering each call after ${REMOTE_LATENCY_MS} ms)` +
        (provider === 'remote'
          ? ''
          : ', each worker taking one document at a time (KB_KAFKA_PARTITION_CONCURRENCY=1, KB_KAFKA_KEY_CONCURRENCY=1), the corpus’s markdown notes only');
  row.notes.push(
    `kb worker --stages <stage> × N per stage with ${how}, uploads through kb serve, timed after ${warmUp.length} warm-up documents of the same kind, ${rounds} round(s) alternating the order; ` +
      `${failed} document(s) failed; chunk counts checked against the version's count and against the embedded runtime's ingestion of the same files where it ran`,
  );
  return row;
}
