/**
 * Ingestion throughput, from the first upload to the last `completed`:
 * - `ingest, local model`: the configured provider embeds; the same chunk texts are then (or, every
 *   other round, first) embedded by the provider alone in a loop, and the two throughputs compared.
 * - `ingest, pipeline overhead`: a cache provider answers with vectors the provider computed for the
 *   same chunks, so what is left is the pipeline's own cost, broken down by stage.
 */
import { STAGE_NAMES } from '../../core/events/events.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import {
  type EngineRequestCount,
  engineRequestCounts,
  engineRequestCountsByLabel,
  engineRequestGrowth,
  engineRequestsCountedApart,
} from '../../core/util/engine-requests.ts';
import { sizeLabel } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { type EngineFloor, measureEngineFloor } from '../lib/engine-floor.ts';
import { busyCores, sampleEngineCpu, sampleMachineCpu } from '../lib/machine-cpu.ts';
import { createCacheProvider, createRecordingProvider } from '../lib/providers.ts';
import { embedInPython, pythonPeer } from '../lib/python-peer.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { startInProcess, startTimedStages, uploadFiles, waitForIngestion } from '../lib/service.ts';
import { firstLine, type Instance, type Target } from '../lib/target.ts';

/** Uploads in flight, as `kb ingest` uses by default. */
const UPLOAD_CONCURRENCY = 4;

export interface IngestRun {
  readonly seconds: number;
  /** From the first upload to the last upload's answer. */
  readonly uploadSeconds: number;
  /** The machine's cores kept busy from the first upload to the last completion, and its CPU seconds (every process). */
  readonly cpu: { readonly cores: number; readonly seconds: number } | null;
  /**
   * CPU seconds of the service's own process over the same span: the API and every stage (this
   * bench runs them in its own process, with the parse pool's and embedding threads), plus the
   * bench's upload client, the same on both runtimes; the engines' processes are not in it.
   */
  readonly serviceCpuSeconds: number;
  /**
   * Requests the service sent to each engine over the same span, by operation (the adapters'
   * counts); the bench's own polls for completion are not among them.
   */
  readonly requests: readonly EngineRequestCount[];
  /** The stages' requests over the same span by stage (`label`), engine and operation; the rest are the API's. */
  readonly stageRequests: ReadonlyArray<EngineRequestCount & { readonly label: string }>;
  /** The bench's own requests over the same span: its polls for completion and its final listing. */
  readonly benchRequests: readonly EngineRequestCount[];
  /** CPU seconds of each engine `deploy/native/` runs (process tree), over the same span; empty when none runs. */
  readonly engineCpuSeconds: ReadonlyMap<string, number>;
  readonly documents: number;
  readonly textMb: number;
  readonly chunks: number;
  readonly busyMs: Record<string, number>;
  readonly chunkCounts: Map<string, number>;
  readonly failed: number;
  readonly problems: string[];
}

/** Ingests the first `count` corpus documents into a fresh instance through the HTTP API. */
export async function ingestOnce(
  ctx: BenchContext,
  target: Target,
  count: number,
  embeddings: EmbeddingProvider,
  /** Runs once the service has stopped, before the instance is removed (the engines' floor). */
  afterStop?: (instance: Instance) => Promise<void>,
): Promise<IngestRun> {
  const files = ctx.corpus.files.slice(0, count);
  const textMb = ctx.corpus.documents.slice(0, count).reduce((sum, d) => sum + d.textBytes, 0) / 1e6;
  const instance = await target.fresh();
  let run: IngestRun | undefined;
  try {
    const service = await startInProcess(instance, { embeddings, keys: 4 });
    try {
      const stages = await startTimedStages(service.runtime, service.logger, embeddings);
      try {
        await service.runtime.ports.getParser();
        const cpuBefore = sampleMachineCpu();
        const ownBefore = process.cpuUsage();
        const requestsBefore = engineRequestCounts();
        const byStageBefore = engineRequestCountsByLabel();
        const benchRequestsBefore = engineRequestsCountedApart();
        const enginesBefore = sampleEngineCpu(ctx.options.enginePids);
        const started = Date.now();
        await uploadFiles(service.url, service.keys, files, UPLOAD_CONCURRENCY);
        const uploaded = Date.now();
        const done = await waitForIngestion(
          service.runtime.ports.documents,
          service.workspaceId,
          files.length,
          Math.max(600_000, count * 3_000),
        );
        const cpuAfter = sampleMachineCpu();
        const own = process.cpuUsage(ownBefore);
        const requests = engineRequestGrowth(requestsBefore, engineRequestCounts());
        const stageRequests = engineRequestCountsByLabel().flatMap((c) => {
          const before = byStageBefore.find(
            (b) => b.label === c.label && b.engine === c.engine && b.operation === c.operation,
          );
          const count = c.count - (before?.count ?? 0);
          return count > 0 ? [{ ...c, count }] : [];
        });
        const benchRequests = engineRequestGrowth(benchRequestsBefore, engineRequestsCountedApart());
        const enginesAfter = sampleEngineCpu(ctx.options.enginePids);
        const engineCpuSeconds = new Map(
          [...enginesAfter].flatMap(([name, seconds]) => {
            const before = enginesBefore.get(name);
            return before === undefined ? [] : [[name, seconds - before] as const];
          }),
        );
        run = {
          stageRequests,
          engineCpuSeconds,
          serviceCpuSeconds: (own.user + own.system) / 1e6,
          requests,
          benchRequests,
          seconds: (done.lastCompletedAt - started) / 1000,
          uploadSeconds: (uploaded - started) / 1000,
          cpu:
            cpuBefore && cpuAfter
              ? { cores: busyCores(cpuBefore, cpuAfter), seconds: cpuAfter.busy - cpuBefore.busy }
              : null,
          documents: done.completed,
          textMb,
          chunks: done.chunks,
          busyMs: { ...stages.busyMs },
          chunkCounts: done.chunkCounts,
          failed: done.failed,
          problems: [...done.failures, ...service.logger.problems.slice(0, 3)],
        };
      } finally {
        await stages.stop();
      }
    } finally {
      await service.close();
    }
    if (afterStop) await afterStop(instance);
    return run as IngestRun;
  } finally {
    await instance.cleanup();
  }
}

/** Embeds `texts` with the provider alone, `batches[i]` texts a call; returns seconds. */
async function providerAlone(provider: EmbeddingProvider, texts: readonly string[], batches: readonly number[]) {
  const started = performance.now();
  let at = 0;
  for (const size of batches) {
    await provider.embedDocuments(texts.slice(at, at + size));
    at += size;
  }
  return (performance.now() - started) / 1000;
}

/** `count` texts in calls of `batchSize` (the last one shorter). */
function fullBatches(count: number, batchSize: number): number[] {
  return Array.from({ length: Math.ceil(count / batchSize) }, (_, i) => Math.min(batchSize, count - i * batchSize));
}

function noteFailures(row: Row, run: IngestRun): void {
  if (run.failed > 0 || run.problems.length > 0) {
    row.notes.push(`${run.failed} document(s) failed: ${run.problems.join(' | ')}`);
  }
}

function stageNote(runs: readonly IngestRun[]): string {
  const perDoc = STAGE_NAMES.map((stage) => {
    const values = runs.map((r) => (r.busyMs[stage] ?? 0) / Math.max(1, r.documents)).sort((a, b) => a - b);
    return `${stage} ${(values[Math.floor(values.length / 2)] ?? 0).toFixed(1)}`;
  });
  return `median handler time per document (ms): ${perDoc.join(', ')}`;
}

export async function ingestLocalModel(ctx: BenchContext, target: Target): Promise<Row> {
  const count = Math.min(ctx.options.localDocs, ctx.corpus.files.length);
  const row = createRow('ingest, local model', target.runtime, `${count} docs`);
  const runs: IngestRun[] = [];
  const docsPerS: number[] = [];
  const mbPerS: number[] = [];
  const pipelineRate: number[] = [];
  const aloneRate: number[] = [];
  const sameBatchesRate: number[] = [];
  const ratio: number[] = [];
  let texts: string[] = [];
  let calls: number[] = [];
  const peer = ctx.onnxModel && target.runtime === 'embedded' ? await pythonPeer(ctx.progress) : null;
  const pythonRate: number[] = [];
  const pythonRatio: number[] = [];
  for (let round = 0; round < ctx.options.rounds; round++) {
    // Alternate the order so a drift in machine load does not favour one side.
    const aloneFirst = round % 2 === 1 && texts.length > 0;
    const alone = async () => ({
      full: await providerAlone(ctx.provider, texts, fullBatches(texts.length, ctx.batchSize)),
      same: await providerAlone(ctx.provider, texts, calls),
    });
    let aloneS = aloneFirst ? await alone() : null;
    const recorder = createRecordingProvider(ctx.provider);
    ctx.progress(`ingest, local model (${target.runtime}): round ${round + 1}, ${count} documents`);
    const run = await ingestOnce(ctx, target, count, recorder);
    runs.push(run);
    noteFailures(row, run);
    for (const [hash, vector] of recorder.vectors) ctx.vectors.set(hash, vector);
    if (target.runtime === 'embedded') for (const [name, n] of run.chunkCounts) ctx.chunkCounts.set(name, n);
    const aloneCount = texts.length;
    texts = recorder.texts;
    calls = recorder.calls;
    if (!aloneS) aloneS = await alone();
    const embedded = recorder.texts.length / run.seconds;
    const aloneTexts = aloneFirst ? aloneCount : texts.length;
    docsPerS.push(run.documents / run.seconds);
    mbPerS.push(run.textMb / run.seconds);
    pipelineRate.push(embedded);
    aloneRate.push(aloneTexts / aloneS.full);
    sameBatchesRate.push(aloneTexts / aloneS.same);
    ratio.push(embedded / (aloneTexts / aloneS.full));
    if (peer && 'python' in peer && ctx.onnxModel) {
      ctx.progress(`ingest, local model: round ${round + 1}, the same ${texts.length} chunks in Python's onnxruntime`);
      const seconds = await embedInPython(peer.python, ctx.onnxModel, texts);
      pythonRate.push(texts.length / seconds);
      pythonRatio.push(embedded / (texts.length / seconds));
    }
  }
  addFigure(row, 'pipeline documents', 'docs/s', docsPerS);
  addFigure(row, 'pipeline text', 'MB/s', mbPerS);
  addFigure(row, 'pipeline chunks embedded', 'chunks/s', pipelineRate);
  addFigure(row, `provider alone, same chunks, ${ctx.batchSize} a call`, 'chunks/s', aloneRate);
  addFigure(row, 'provider alone, same chunks, pipeline’s calls', 'chunks/s', sameBatchesRate);
  judge(addFigure(row, 'pipeline ÷ provider alone', 'ratio', ratio), { atLeast: 0.9 });
  if (pythonRate.length > 0) {
    addFigure(row, 'same model in Python onnxruntime, same chunks', 'chunks/s', pythonRate);
    judge(addFigure(row, 'pipeline ÷ Python onnxruntime', 'ratio', pythonRatio), { atLeast: 0.8 });
    row.notes.push(
      "Python peer: the same ONNX file and tokenizer.json in onnxruntime with the tokenizers package, one text a call, the provider's thread count (bench/peers/onnxruntime_embed.py)",
    );
  } else if (peer && 'unavailable' in peer) {
    row.notes.push(peer.unavailable);
  }
  row.notes.push(
    `${ctx.provider.model}, ${texts.length} chunks in ${calls.length} embedding calls (the embed stage embeds one document's new chunks a call); ` +
      `${stageNote(runs)} (stages overlap, so these add up to more than the wall time)`,
  );
  return row;
}

export async function ingestOverhead(ctx: BenchContext, target: Target, size: number): Promise<Row> {
  const count = Math.min(size, ctx.corpus.files.length);
  const row = createRow('ingest, pipeline overhead', target.runtime, `${sizeLabel(count)} docs`);
  const runs: IngestRun[] = [];
  const floors: EngineFloor[] = [];
  let real = 0;
  let total = 0;
  // A 10k-document round on the distributed runtime takes about half an hour on 2 cores: one round there.
  const rounds = count >= 5000 && target.runtime === 'distributed' ? 1 : ctx.options.rounds;
  for (let round = 0; round < rounds; round++) {
    ctx.progress(`ingest, pipeline overhead (${target.runtime}): round ${round + 1}, ${count} documents`);
    const cache = createCacheProvider(ctx.provider, ctx.vectors);
    const measureFloor =
      target.runtime === 'distributed'
        ? async (instance: Instance) => {
            if (instance.config.runtime !== 'distributed') return;
            ctx.progress(`ingest, pipeline overhead (${target.runtime}): round ${round + 1}, the engines' floor`);
            try {
              floors.push(await measureEngineFloor(instance.config, ctx.options.enginePids));
            } catch (error) {
              row.notes.push(`round ${round + 1}: the engines' floor could not be measured: ${firstLine(error)}`);
            }
          }
        : undefined;
    let run: IngestRun;
    try {
      run = await ingestOnce(ctx, target, count, cache, measureFloor);
    } catch (error) {
      // An engine restarted by someone else's drill: the rounds done so far still count.
      if (runs.length === 0) throw error;
      row.notes.push(`round ${round + 1} failed, the figures are those of ${runs.length}: ${firstLine(error)}`);
      floors.length = Math.min(floors.length, runs.length);
      break;
    }
    runs.push(run);
    noteFailures(row, run);
    if (target.runtime === 'embedded') for (const [name, n] of run.chunkCounts) ctx.chunkCounts.set(name, n);
    real = cache.hits;
    total = cache.hits + cache.misses;
  }
  addFigure(
    row,
    'documents',
    'docs/s',
    runs.map((r) => r.documents / r.seconds),
  );
  addFigure(
    row,
    `uploads answered (${UPLOAD_CONCURRENCY} in flight)`,
    'docs/s',
    runs.map((r) => r.documents / r.uploadSeconds),
  );
  addFigure(
    row,
    'text',
    'MB/s',
    runs.map((r) => r.textMb / r.seconds),
  );
  addFigure(
    row,
    'chunks indexed',
    'chunks/s',
    runs.map((r) => r.chunks / r.seconds),
  );
  const withCpu = runs.flatMap((r) => (r.cpu === null ? [] : [{ run: r, cpu: r.cpu }]));
  if (withCpu.length > 0) {
    addFigure(
      row,
      'machine CPU busy while ingesting (all processes)',
      'cores',
      withCpu.map(({ cpu }) => cpu.cores),
    );
    addFigure(
      row,
      'machine CPU time per document (all processes)',
      'ms/doc',
      withCpu.map(({ run, cpu }) => (cpu.seconds * 1000) / Math.max(1, run.documents)),
    );
  }
  addFigure(
    row,
    "service process CPU time per document (API and stages; the bench's upload client included)",
    'ms/doc',
    runs.map((r) => (r.serviceCpuSeconds * 1000) / Math.max(1, r.documents)),
  );
  if (target.runtime === 'distributed') {
    addEngineCpuFigures(row, runs);
    addRequestFigures(row, runs);
    if (floors.length === runs.length) addFloorFigures(row, runs, floors);
    else row.notes.push(`the engines' floor was measured in ${floors.length} of ${runs.length} rounds: not compared`);
  }
  for (const stage of STAGE_NAMES) {
    addFigure(
      row,
      `${stage} stage handler time`,
      'ms/doc',
      runs.map((r) => (r.busyMs[stage] ?? 0) / Math.max(1, r.documents)),
    );
  }
  row.notes.push(
    `cache provider: ${real} of ${total} chunk vectors were computed by ${ctx.provider.model} earlier in the run; ` +
      'the rest are unit vectors derived from the chunk hash (the model cannot embed this many chunks in the time budget, and the values do not change the pipeline’s work)',
  );
  if (rounds < ctx.options.rounds)
    row.notes.push(`${rounds} round at ${sizeLabel(count)} documents, to bound the run time`);
  return row;
}

/** Requests of `runs[i]` to `engine` (only the operations `operation` accepts), per document. */
function requestsPerDocument(
  runs: readonly IngestRun[],
  engine: string,
  operation: (op: string) => boolean = () => true,
) {
  return runs.map(
    (r) =>
      r.requests.filter((c) => c.engine === engine && operation(c.operation)).reduce((sum, c) => sum + c.count, 0) /
      Math.max(1, r.documents),
  );
}

/** CPU time per document of each engine process (tree) that `deploy/native/` started. */
function addEngineCpuFigures(row: Row, runs: readonly IngestRun[]): void {
  const names = [...new Set(runs.flatMap((r) => [...r.engineCpuSeconds.keys()]))].sort();
  for (const name of names) {
    addFigure(
      row,
      `${name} CPU time per document`,
      'ms/doc',
      runs.flatMap((r) => {
        const seconds = r.engineCpuSeconds.get(name);
        return seconds === undefined ? [] : [(seconds * 1000) / Math.max(1, r.documents)];
      }),
    );
  }
}

/** Engines whose CPU ÷ floor has a goal (issue 32): at most 1.5. */
const FLOOR_GOALS: Record<string, number> = { opensearch: 1.5, minio: 1.5, kafka: 1.5 };

/** The service's request counts of each engine the floor names, by pid-file name. */
const REQUEST_ENGINE: Record<string, string> = {
  opensearch: 'opensearch',
  minio: 'minio',
  kafka: 'kafka',
  clickhouse: 'clickhouse',
};

/**
 * The engines' floor (see `bench/lib/engine-floor.ts`), measured after each round on that round's
 * final state: each engine's CPU and requests per document to hold it, and the pipeline's ÷ the floor's.
 */
function addFloorFigures(row: Row, runs: readonly IngestRun[], floors: readonly EngineFloor[]): void {
  const names = [...new Set(floors.flatMap((f) => [...f.keys()]))].sort();
  for (const name of names) {
    const paired = runs.flatMap((run, i) => {
      const part = floors[i]?.get(name);
      const pipeline = run.engineCpuSeconds.get(name);
      return part === undefined || pipeline === undefined ? [] : [{ run, part, pipeline }];
    });
    if (paired.length === 0) continue;
    addFigure(
      row,
      `${name} floor CPU time per document`,
      'ms/doc',
      paired.map(({ run, part }) => (part.cpuSeconds * 1000) / Math.max(1, run.documents)),
    );
    const ratio = addFigure(
      row,
      `${name} CPU per document, pipeline ÷ floor`,
      'ratio',
      paired.map(({ part, pipeline }) => pipeline / Math.max(part.cpuSeconds, 0.01)),
    );
    const goal = FLOOR_GOALS[name];
    if (goal !== undefined) judge(ratio, { atMost: goal });
    const engine = REQUEST_ENGINE[name];
    addFigure(
      row,
      `${name} floor requests per document`,
      'req/doc',
      paired.map(({ run, part }) => part.requests / Math.max(1, run.documents)),
    );
    if (engine) {
      addFigure(
        row,
        `${name} requests per document, pipeline ÷ floor`,
        'ratio',
        paired.map(
          ({ run, part }) =>
            run.requests.filter((c) => c.engine === engine).reduce((sum, c) => sum + c.count, 0) /
            Math.max(1, part.requests),
        ),
      );
    }
  }
  const last = floors.at(-1);
  if (last) {
    row.notes.push(
      `floor (last round): the run's final state written straight to each engine by the bench, one engine at a time: ${[
        ...last,
      ]
        .map(([name, p]) => `${name} ${p.items} items in ${p.requests} requests`)
        .join(
          ', ',
        )} (OpenSearch _bulk of 500 and one refresh, MinIO 16 puts in flight, Kafka 1,000 messages a produce, ClickHouse 1,000 rows an insert)`,
    );
  }
}

/** Requests per document to each engine, from the adapters' counters; the goals of issue 26. */
function addRequestFigures(row: Row, runs: readonly IngestRun[]): void {
  judge(addFigure(row, 'OpenSearch requests per document', 'req/doc', requestsPerDocument(runs, 'opensearch')), {
    atMost: 2,
  });
  addFigure(
    row,
    'Kafka produce requests per document',
    'req/doc',
    requestsPerDocument(runs, 'kafka', (op) => op === 'Produce'),
  );
  addFigure(
    row,
    'Kafka fetch requests per document',
    'req/doc',
    requestsPerDocument(runs, 'kafka', (op) => op === 'Fetch'),
  );
  addFigure(row, 'Kafka requests per document (every kind)', 'req/doc', requestsPerDocument(runs, 'kafka'));
  addFigure(row, 'MinIO requests per document', 'req/doc', requestsPerDocument(runs, 'minio'));
  judge(
    addFigure(
      row,
      'ClickHouse inserts per document',
      'req/doc',
      requestsPerDocument(runs, 'clickhouse', (op) => op === 'insert'),
    ),
    { atMost: 0.1 },
  );
  addFigure(
    row,
    'ClickHouse queries per document',
    'req/doc',
    requestsPerDocument(runs, 'clickhouse', (op) => op !== 'insert'),
  );
  addFigure(row, 'schema registry requests per document', 'req/doc', requestsPerDocument(runs, 'schema-registry'));
  const last = runs.at(-1);
  if (last) {
    const byOperation = [...last.requests]
      .sort((a, b) => a.engine.localeCompare(b.engine) || b.count - a.count)
      .map((c) => `${c.engine} ${c.operation} ${(c.count / Math.max(1, last.documents)).toFixed(2)}`);
    row.notes.push(`requests per document by operation (last round): ${byOperation.join(', ')}`);
    const perDoc = (n: number) => (n / Math.max(1, last.documents)).toFixed(2);
    const byStage = STAGE_NAMES.map((stage) => {
      const own = last.stageRequests.filter((c) => c.label === stage);
      const of = (engine: string) => own.filter((c) => c.engine === engine).reduce((sum, c) => sum + c.count, 0);
      const ops = own
        .filter((c) => c.engine === 'opensearch')
        .sort((a, b) => b.count - a.count)
        .map((c) => `${c.operation} ${perDoc(c.count)}`)
        .join(' ');
      return `${stage}: OpenSearch ${perDoc(of('opensearch'))} (${ops}), MinIO ${perDoc(of('minio'))}`;
    });
    row.notes.push(
      `requests per document by stage (last round; a request shared by several stages counts under the one that started it; the rest are the API's; Kafka's are counted where kafkajs reports them, outside any stage): ${byStage.join('; ')}`,
    );
    const polls = last.benchRequests
      .filter((c) => c.engine === 'opensearch')
      .map((c) => `${c.operation} ${(c.count / Math.max(1, last.documents)).toFixed(2)}`);
    if (polls.length > 0) {
      row.notes.push(
        `not counted above: the bench's own OpenSearch requests (a count of completed and of failed documents a second, the final listing), per document (last round): ${polls.join(', ')}`,
      );
    }
  }
}

/** The per-round values of the figure `name` of `row`, or an empty list. */
function figureValues(row: Row | undefined, name: string): number[] {
  return row?.figures.find((f) => f.name === name)?.values ?? [];
}

/**
 * Adds to each distributed pipeline-overhead row its documents/s ÷ the embedded runtime's on the same
 * corpus, measured earlier in the same run: distributed round i against embedded round i.
 */
export function compareRuntimes(rows: Row[]): void {
  const documents = (row: Row | undefined) => row?.figures.find((f) => f.name === 'documents')?.values ?? [];
  for (const row of rows) {
    if (row.scenario !== 'ingest, pipeline overhead' || row.runtime !== 'distributed') continue;
    const embedded = documents(
      rows.find((r) => r.scenario === row.scenario && r.runtime === 'embedded' && r.size === row.size),
    );
    const distributed = documents(row);
    if (embedded.length === 0 || distributed.length === 0) continue;
    const ratios = distributed.map((value, i) => value / (embedded[i % embedded.length] as number));
    judge(addFigure(row, 'distributed ÷ embedded documents', 'ratio', ratios), { atLeast: 0.8 });
    const embeddedRow = rows.find(
      (r) => r.scenario === row.scenario && r.runtime === 'embedded' && r.size === row.size,
    );
    const costRatio = (name: string) => {
      const base = figureValues(embeddedRow, name);
      return figureValues(row, name).flatMap((value, i) =>
        base.length === 0 ? [] : [value / (base[i % base.length] as number)],
      );
    };
    const machine = costRatio('machine CPU time per document (all processes)');
    if (machine.length > 0) {
      judge(addFigure(row, 'machine CPU per document, distributed ÷ embedded', 'ratio', machine), { atMost: 1.5 });
    }
    const service = costRatio(
      "service process CPU time per document (API and stages; the bench's upload client included)",
    );
    if (service.length > 0) {
      judge(addFigure(row, 'service process CPU per document, distributed ÷ embedded', 'ratio', service), {
        atMost: 1.1,
      });
    }
    row.notes.push('distributed ÷ embedded pairs each distributed round with the embedded round of the same number');
  }
}
