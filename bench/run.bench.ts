/**
 * `npm run bench` — the service's benchmarks: one table on stdout, `bench/results/latest.json`.
 * Usage and options: `USAGE` below (`npm run bench -- --help`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config/config.ts';
import { describeModel } from '../core/ports/embedding/model-catalog.ts';
import { createEmbeddingProvider } from '../core/runtime/create-embedding-provider.ts';
import { serviceVersion } from '../core/runtime/runtime.ts';
import { ALL_FAULTS, type ChaosFault } from '../support/chaos/chaos-run.ts';
import { DEFAULT_SEED, parseSize, sizeLabel, summarize as summarizeCorpus, writeCorpus } from './corpus.ts';
import type { BenchContext, BenchOptions } from './lib/context.ts';
import { createRow, goals, machine, type Row, renderMarkdown, renderTable, writeResults } from './lib/report.ts';
import { distributedTarget, embeddedTarget, firstLine, REPO_ROOT, type Target } from './lib/target.ts';
import { apiOverhead } from './scenarios/api-overhead.scenario.ts';
import { backpressureScenario } from './scenarios/backpressure.scenario.ts';
import { backupScenario } from './scenarios/backup.scenario.ts';
import { backupMoveScenario, MOVE_CHUNKS } from './scenarios/backup-move.scenario.ts';
import { bulkIngestScenario } from './scenarios/bulk-ingest.scenario.ts';
import { type ChaosBenchOptions, chaosScenario } from './scenarios/chaos.scenario.ts';
import { cliHelp } from './scenarios/cli-help.scenario.ts';
import { compareEmbeddingServer, ingestEmbeddingServer } from './scenarios/embedding-server.scenario.ts';
import { fairnessScenario } from './scenarios/fairness.scenario.ts';
import { compareRuntimes, ingestLocalModel, ingestOverhead } from './scenarios/ingest.scenario.ts';
import { KEYWORD_INDEX_SIZES, keywordIndexScenario } from './scenarios/keyword-index.scenario.ts';
import { notificationsScenario } from './scenarios/notifications.scenario.ts';
import { scaleOut } from './scenarios/scale-out.scenario.ts';
import { compareSearchRuntimes, searchScenario } from './scenarios/search.scenario.ts';
import { compareFilteredRuntimes, searchFilteredScenario } from './scenarios/search-filtered.scenario.ts';
import { sourcesScenario } from './scenarios/sources.scenario.ts';
import { streamsScenario } from './scenarios/streams.scenario.ts';
import { uploadIngress } from './scenarios/upload-ingress.scenario.ts';
import { vectorIndexScenario } from './scenarios/vector-index.scenario.ts';

const SCENARIOS = [
  'cli',
  'ingest',
  'overhead',
  'embedding-server',
  'upload',
  'backpressure',
  'search',
  'search-filtered',
  'vector-index',
  'keyword-index',
  'api',
  'fairness',
  'sources',
  'bulk-ingest',
  'notifications',
  'streams',
  'backup',
  'scale-out',
  'chaos',
] as const;
/** Scenarios run only when named with `--only`: chaos stops and starts the shared engines. */
const ON_REQUEST: readonly string[] = ['chaos'];

const USAGE = `Usage: npm run bench -- [options]

Runs the service's benchmarks and prints one table (also written to bench/results/latest.json and
latest.md). Every speed figure is a ratio against a baseline measured in the same run, over rounds
(min/median/max). Settings of the service itself (embedding provider, batch size, chunking…) come
from the usual configuration; the distributed runtime's from KB_RUNTIME=distributed variables or,
when unset, from deploy/native/env (it is skipped when its engines are not up).

Options:
  --quick                 smoke run, embedded only, under two minutes
  --only <list>           scenarios, comma-separated: ${SCENARIOS.join(', ')} (default: all but chaos)
  --runtime <name>        embedded | distributed | both (default: both; with --quick: embedded)
  --size <list>           pipeline-overhead corpus size(s): 200, 1k (default), 10k, or a list "1k,10k"
  --search-sizes <list>   search corpus sizes in chunks (default 10k,100k; 300k or 1m for more)
  --rounds <n>            rounds per figure (default 3; with --quick: 1)
  --local-docs <n>        documents of the embedding-model ingest rows (default 80)
  --api-docs <n>          documents the API-overhead row lists (default 1000)
  --source-files <n>      files of the folder the sources row syncs (default 10000; with --quick: 500)
  --bulk-files <n>        files of the folder the bulk-ingest row loads with kb ingest (default 2000; with --quick: 200)
  --backup-chunks <n>     chunks of the knowledge base the backup row backs up and restores (default 100k; with --quick: 5k);
                          on the distributed runtime the row restores 10k embedded chunks onto the engines (--quick: 2k)
  --seed <n>              seed of the synthetic corpora
  --chaos-docs <n>        chaos: documents the clients create (default 400)
  --chaos-clients <n>     chaos: clients writing at once (default 4)
  --chaos-seconds <n>     chaos: the uploads and faults are spread over this long (default 150)
  --chaos-faults <list>   chaos: ${ALL_FAULTS.join(', ')} (default: all); "workers,api" leaves the engines alone
  --native-dir <path>     chaos, and the engines' CPU in the overhead row: the deploy/native scripts of
                          the checkout that started the engines (its .run/pids)
                          (default: KB_CHAOS_NATIVE_DIR, else this checkout's deploy/native)
  -h, --help              this text

Examples:
  npm run bench -- --only search,api --runtime embedded
  npm run bench -- --only vector-index --search-sizes 10k,100k,1m
  npm run bench -- --only keyword-index --runtime embedded
  npm run bench -- --only chaos --chaos-docs 100 --chaos-seconds 60 --chaos-faults workers,api,kafka
`;
type Scenario = (typeof SCENARIOS)[number];

function autocannonVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('autocannon/package.json') as { version: string }).version;
}

/** A positive whole number given as `--name`, or the fallback. */
function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a positive whole number, got "${value}"`);
  return n;
}

/** `--backup-chunks`: a size such as 100000 or 100k. */
function backupChunks(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = parseSize(value);
  if (n < 1) throw new Error(`--backup-chunks: expected a positive size such as 100k, got "${value}"`);
  return n;
}

function sizes(value: string): number[] {
  return value.split(',').map((s) => parseSize(s));
}

function chaosFaults(value: string | undefined): ChaosFault[] {
  if (value === undefined || value === 'all') return [...ALL_FAULTS];
  const faults = value.split(',').map((s) => s.trim());
  const unknown = faults.filter((f) => !ALL_FAULTS.includes(f as ChaosFault));
  if (unknown.length > 0)
    throw new Error(`--chaos-faults: unknown ${unknown.join(', ')}; choose from ${ALL_FAULTS.join(', ')}`);
  return faults as ChaosFault[];
}

function readOptions():
  | { options: BenchOptions; only: Scenario[]; runtimes: string; chaos: ChaosBenchOptions }
  | 'help' {
  const { values } = parseOptions();
  if (values.help) return 'help';
  const quick = values.quick ?? false;
  const only = (values.only ?? SCENARIOS.filter((s) => !ON_REQUEST.includes(s)).join(','))
    .split(',')
    .map((s) => s.trim()) as Scenario[];
  const unknown = only.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length > 0)
    throw new Error(`Unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  const options: BenchOptions = {
    quick,
    rounds: count('rounds', values.rounds, quick ? 1 : 3),
    localDocs: count('local-docs', values['local-docs'], quick ? 16 : 80),
    overheadSizes: sizes(values.size ?? (quick ? '200' : '1k')),
    searchSizes: sizes(values['search-sizes'] ?? (quick ? '2k,10k' : '10k,100k')),
    latencyQueries: quick ? 24 : 64,
    recallQueries: quick ? 50 : 200,
    ingressFiles: 16,
    ingressBytes: 50_000_000,
    apiSeconds: quick ? 3 : 10,
    apiDocuments: count('api-docs', values['api-docs'], 1000),
    sourceFiles: count('source-files', values['source-files'], quick ? 500 : 10_000),
    bulkFiles: count('bulk-files', values['bulk-files'], quick ? 200 : 2000),
    backupChunks: backupChunks(values['backup-chunks'], quick ? 5000 : 100_000),
    seed: count('seed', values.seed, DEFAULT_SEED),
    enginePids: path.join(values['native-dir'] ?? process.env.KB_CHAOS_NATIVE_DIR ?? NATIVE_DIR, '.run/pids'),
  };
  const runtimes = values.runtime ?? (quick ? 'embedded' : 'both');
  if (!['embedded', 'distributed', 'both'].includes(runtimes))
    throw new Error('--runtime: embedded | distributed | both');
  const nativeDir = values['native-dir'] ?? process.env.KB_CHAOS_NATIVE_DIR;
  const chaos: ChaosBenchOptions = {
    documents: count('chaos-docs', values['chaos-docs'], 400),
    clients: count('chaos-clients', values['chaos-clients'], 4),
    seconds: count('chaos-seconds', values['chaos-seconds'], 150),
    faults: chaosFaults(values['chaos-faults']),
    ...(nativeDir ? { nativeDir } : {}),
  };
  return { options, only, runtimes, chaos };
}

/** This checkout's `deploy/native/`. */
const NATIVE_DIR = path.join(REPO_ROOT, 'deploy/native');

function parseOptions() {
  return parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      size: { type: 'string' },
      only: { type: 'string' },
      runtime: { type: 'string' },
      rounds: { type: 'string' },
      'local-docs': { type: 'string' },
      'search-sizes': { type: 'string' },
      'api-docs': { type: 'string' },
      'source-files': { type: 'string' },
      'bulk-files': { type: 'string' },
      'backup-chunks': { type: 'string' },
      seed: { type: 'string' },
      'chaos-docs': { type: 'string' },
      'chaos-clients': { type: 'string' },
      'chaos-seconds': { type: 'string' },
      'chaos-faults': { type: 'string' },
      'native-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  let read: ReturnType<typeof readOptions>;
  try {
    read = readOptions();
  } catch (error) {
    // Only the command line is read here: every failure is a mistake in it.
    const message = (error as Error).message.split('. To specify')[0];
    process.stderr.write(`npm run bench: ${message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (read === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { options, only, runtimes, chaos } = read;
  const progress = (message: string) =>
    process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
  const config = loadConfig();

  const targets: Target[] = [];
  const unavailable: string[] = [];
  if (runtimes !== 'distributed') targets.push(embeddedTarget(config));
  if (runtimes !== 'embedded') {
    progress('checking the distributed runtime');
    const distributed = await distributedTarget(config);
    if ('unavailable' in distributed) unavailable.push(distributed.unavailable);
    else targets.push(distributed);
  } else {
    unavailable.push(options.quick ? 'quick mode runs the embedded runtime only' : '--runtime embedded was given');
  }

  progress(`loading the ${config.embedding.provider} embedding provider`);
  const provider = await createEmbeddingProvider(config.embedding, config.outbound);
  const corpusSize = Math.max(options.localDocs, ...options.overheadSizes);
  const corpusDir = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-corpus-'));
  const rows: Row[] = [];
  try {
    progress(`writing the corpus: ${corpusSize} documents (seed ${options.seed})`);
    const corpus = await writeCorpus(corpusDir, corpusSize, options.seed);
    const base: BenchContext = {
      options,
      provider,
      vectors: new Map(),
      chunkCounts: new Map(),
      corpus: { dir: corpusDir, files: corpus.files, documents: corpus.documents },
      batchSize: config.embedding.batchSize,
      onnxModel:
        config.embedding.provider === 'transformers'
          ? {
              folder: path.join(config.embedding.transformersModelPath, config.embedding.transformersModel),
              pooling: describeModel(config.embedding.transformersModel).pooling,
              threads: config.embedding.threads,
            }
          : null,
      progress,
    };

    const attempt = async (
      scenario: string,
      runtime: Target['runtime'],
      size: string,
      body: () => Promise<Row | readonly Row[] | undefined>,
    ) => {
      try {
        const result = await body();
        if (Array.isArray(result)) rows.push(...result);
        else if (result) rows.push(result as Row);
      } catch (error) {
        const row = createRow(scenario, runtime, size);
        row.skipped = `failed: ${firstLine(error).slice(0, 600)}`;
        rows.push(row);
        progress(
          `${scenario} (${runtime}) failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
    };

    if (only.includes('cli')) {
      // Neither runtime is involved: help never loads one.
      await attempt('cli, help', 'embedded', '10 runs', () => cliHelp(base));
    }
    for (const target of targets) {
      // Every step of the distributed runtime goes through engines sharing the same cores: two rounds there.
      const ctx =
        target.runtime === 'distributed'
          ? { ...base, options: { ...options, rounds: Math.min(2, options.rounds) } }
          : base;
      if (only.includes('ingest')) {
        await attempt('ingest, local model', target.runtime, `${options.localDocs} docs`, () =>
          ingestLocalModel(ctx, target),
        );
      }
      if (only.includes('overhead')) {
        for (const size of options.overheadSizes) {
          await attempt('ingest, pipeline overhead', target.runtime, `${sizeLabel(size)} docs`, () =>
            ingestOverhead(ctx, target, size),
          );
        }
      }
      if (only.includes('embedding-server')) {
        for (const size of options.overheadSizes) {
          await attempt('ingest, embedding server', target.runtime, `${sizeLabel(size)} docs`, () =>
            ingestEmbeddingServer(ctx, target, size, config.embedding.concurrency),
          );
        }
      }
      if (only.includes('upload')) {
        await attempt('upload ingress', target.runtime, `${options.ingressFiles} files`, () =>
          uploadIngress(ctx, target),
        );
      }
      // Several minutes whatever the options: not part of a quick run.
      if (only.includes('backpressure') && target.runtime === 'embedded' && !options.quick) {
        await attempt('backpressure', target.runtime, '45 s at 10× the drain', () => backpressureScenario(ctx, target));
      }
      if (only.includes('search')) {
        await attempt('search', target.runtime, options.searchSizes.map(sizeLabel).join(', '), () =>
          searchScenario(ctx, target, rows).then(() => undefined),
        );
      }
      if (only.includes('search-filtered')) {
        await attempt('search, filtered', target.runtime, options.searchSizes.map(sizeLabel).join(', '), () =>
          searchFilteredScenario(ctx, target, rows).then(() => undefined),
        );
      }
      if (only.includes('vector-index') && target.runtime === 'embedded') {
        await attempt('vector index', target.runtime, options.searchSizes.map(sizeLabel).join(', '), () =>
          vectorIndexScenario(ctx, target, rows).then(() => undefined),
        );
      }
      if (only.includes('keyword-index') && target.runtime === 'embedded') {
        const sizes = options.quick ? KEYWORD_INDEX_SIZES.slice(0, 2) : KEYWORD_INDEX_SIZES;
        await attempt('keyword index', target.runtime, sizes.map(sizeLabel).join(', '), () =>
          keywordIndexScenario(ctx, target, rows).then(() => undefined),
        );
      }
      if (only.includes('api')) {
        await attempt('API overhead', target.runtime, '1000 docs', () => apiOverhead(ctx, target));
      }
      if (only.includes('fairness')) {
        await attempt('fairness across workspaces', target.runtime, '30 small docs', () =>
          fairnessScenario(ctx, target),
        );
      }
      if (only.includes('sources') && target.runtime === 'embedded') {
        await attempt('sources: folder sync', target.runtime, `${options.sourceFiles} files`, () =>
          sourcesScenario(ctx, target, options.sourceFiles),
        );
      }
      if (only.includes('bulk-ingest') && target.runtime === 'embedded') {
        await attempt('bulk ingest', target.runtime, `${options.bulkFiles} files`, () =>
          bulkIngestScenario(ctx, target, options.bulkFiles),
        );
      }
      if (only.includes('backup') && target.runtime === 'embedded') {
        await attempt('backup', target.runtime, `${sizeLabel(options.backupChunks)} chunks`, () =>
          backupScenario(ctx, target, options.backupChunks),
        );
      }
      if (only.includes('backup') && target.runtime === 'distributed') {
        const chunks = options.quick ? 2000 : MOVE_CHUNKS;
        await attempt('backup, embedded → distributed', target.runtime, `${sizeLabel(chunks)} chunks`, () =>
          backupMoveScenario(ctx, embeddedTarget(config), target, chunks),
        );
      }
      if (only.includes('notifications')) {
        await attempt('notifications', target.runtime, `at 50 docs/s`, () => notificationsScenario(ctx, target));
      }
      if (only.includes('streams') && target.runtime === 'embedded') {
        await attempt('streams, idle', target.runtime, '300 streams', () => streamsScenario(ctx, target));
      }
    }
    compareRuntimes(rows);
    compareEmbeddingServer(rows);
    compareSearchRuntimes(rows);
    compareFilteredRuntimes(rows);
    const distributed = targets.find((t) => t.runtime === 'distributed');
    if (only.includes('scale-out') && distributed) {
      await attempt('scale-out', 'distributed', `${options.localDocs} docs`, () => scaleOut(base, distributed));
    }
    if (only.includes('chaos') && distributed) {
      await attempt('chaos', 'distributed', `${chaos.documents} docs`, () => chaosScenario(base, distributed, chaos));
    }
    for (const reason of unavailable) {
      const distributedOnly = only.filter((s) => s === 'scale-out' || s === 'chaos');
      for (const scenario of ['all scenarios', ...distributedOnly]) {
        const row = createRow(scenario, 'distributed', '–');
        row.skipped = reason;
        rows.push(row);
      }
    }

    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      versions: {
        service: serviceVersion(),
        node: process.version,
        autocannon: autocannonVersion(),
        embeddingModel: provider.model,
        ...Object.assign({}, ...targets.map((t) => t.versions)),
      },
      options,
      corpus: summarizeCorpus(corpus.documents, options.seed),
      seconds: Math.round((performance.now() - started) / 1000),
      rows,
    };
    const m = results.machine;
    const c = results.corpus;
    const header = [
      `kb-document-service ${results.versions.service} benchmarks — ${results.date}`,
      `machine: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, load average ${m.loadAverage.join(' ')} at the end`,
      `versions: ${Object.entries(results.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      `corpus: ${c.documents} documents (${c.files.markdown} markdown, ${c.files.csv} CSV, ${c.files.pdf} PDF), ` +
        `${c.fileMb.toFixed(1)} MB of files, ${c.textMb.toFixed(1)} MB of text, seed ${c.seed}`,
      `mode: ${options.quick ? 'quick' : 'full'}, runtimes: ${targets.map((t) => t.runtime).join(', ')}; ` +
        `${options.rounds} round(s) per figure (at most 2 on the distributed runtime and at 100k chunks; n says)`,
    ];
    console.log([...header, '', renderTable(rows), ''].join('\n'));
    const verdicts = goals(rows);
    const missed = verdicts.filter((v) => v.goal.met === false);
    console.log(
      `goals: ${verdicts.length - missed.length} of ${verdicts.length} met` +
        (missed.length > 0
          ? `; missed: ${missed.map((v) => `${v.row.scenario} (${v.row.runtime}, ${v.row.size}) ${v.figure.name} ${v.goal.text}`).join('; ')}`
          : ''),
    );
    const file = fileURLToPath(new URL('./results/latest.json', import.meta.url));
    await writeResults(file, results);
    await writeFile(file.replace(/\.json$/, '.md'), `${header.join('  \n')}\n\n${renderMarkdown(rows)}\n`);
    console.log(`results: ${path.relative(process.cwd(), file)} and latest.md beside it (${results.seconds} s)`);
  } finally {
    await provider.close();
    await rm(corpusDir, { recursive: true, force: true });
  }
}

await main();
