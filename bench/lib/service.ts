/**
 * The service under test, in this process (runtime + HTTP API on a free loopback port) or as
 * `kb serve` / `kb worker` child processes, and the HTTP calls the benchmarks make against it.
 */
import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { type RunningServer, startServer } from '../../apps/api/server.ts';
import type { Config } from '../../core/config/config.ts';
import { type EventBase, STAGE_NAMES, type StageName } from '../../core/events/events.ts';
import type { Logger } from '../../core/model/logger.model.ts';
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import type { Subscription } from '../../core/ports/message-log/message-log.port.ts';
import { createRuntime, type Runtime, stageDependencies } from '../../core/runtime/runtime.ts';
import { createStages } from '../../core/stages/pipeline-stages.ts';
import { runStage } from '../../core/stages/stage-runner.ts';
import { countedApart, countedUnder } from '../../core/util/engine-requests.ts';
import type { Instance } from './target.ts';

/** A logger that keeps the pipeline's warnings and errors for the report instead of printing them. */
export function collectingLogger(): Logger & { readonly problems: string[] } {
  const problems: string[] = [];
  const keep = (level: string) => (obj: object, msg?: string) => {
    if (problems.length < 50) problems.push(`${level}: ${msg ?? ''} ${JSON.stringify(obj)}`.slice(0, 400));
  };
  return { problems, info() {}, debug() {}, warn: keep('warn'), error: keep('error') };
}

export interface OpenInstance {
  readonly runtime: Runtime;
  readonly workspaceId: string;
  /** Keys of `workspaceId` with read, search and write on the enterprise plan. */
  readonly keys: string[];
  readonly logger: ReturnType<typeof collectingLogger>;
  close(): Promise<void>;
}

export interface InProcessService extends OpenInstance {
  readonly server: RunningServer;
  readonly url: string;
}

/** Creates `count` keys for a workspace (enterprise plan: 10,000 requests a minute each). */
export async function createKeys(runtime: Runtime, workspaceId: string, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await runtime.services.keys.create({
      workspaceId,
      name: `bench-${i}`,
      permissions: ['read', 'search', 'write'],
      plan: 'enterprise',
    });
    keys.push(created.key);
  }
  return keys;
}

/** The instance's runtime in this process, with no stages, and a fresh workspace with `keys` keys. */
export async function openInstance(
  instance: Instance,
  options: { embeddings?: EmbeddingProvider; keys?: number } = {},
): Promise<OpenInstance> {
  const logger = collectingLogger();
  const runtime = await createRuntime(instance.config, {
    stages: 'none',
    logger,
    ...(options.embeddings ? { embeddings: options.embeddings } : {}),
  });
  try {
    const workspaceId = `bench-${randomBytes(4).toString('hex')}`;
    const keys = await createKeys(runtime, workspaceId, options.keys ?? 1);
    return { runtime, workspaceId, keys, logger, close: () => runtime.close() };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/** {@link openInstance} plus the HTTP API, both in this process. */
export async function startInProcess(
  instance: Instance,
  options: { embeddings?: EmbeddingProvider; keys?: number } = {},
): Promise<InProcessService> {
  const open = await openInstance(instance, options);
  try {
    const server = await startServer({
      config: instance.config,
      services: open.runtime.services,
      version: open.runtime.version,
      logger: false,
    });
    return {
      ...open,
      server,
      url: server.url,
      async close() {
        await server.close();
        await open.close();
      },
    };
  } catch (error) {
    await open.close();
    throw error;
  }
}

export interface TimedStages {
  /** Milliseconds each stage spent in its handler, summed over messages. */
  readonly busyMs: Record<StageName, number>;
  readonly handled: Record<StageName, number>;
  stop(): Promise<void>;
}

/**
 * Starts the four pipeline stages exactly as the runtime does (`createStages` + `runStage` over
 * the runtime's ports), with each handler timed, and with `embeddings` as the embed stage's
 * provider when given.
 */
export async function startTimedStages(
  runtime: Runtime,
  logger: Logger,
  embeddings?: EmbeddingProvider,
): Promise<TimedStages> {
  const { ports, config, topics } = runtime;
  const busyMs = Object.fromEntries(STAGE_NAMES.map((n) => [n, 0])) as Record<StageName, number>;
  const handled = Object.fromEntries(STAGE_NAMES.map((n) => [n, 0])) as Record<StageName, number>;
  const definitions = createStages(
    {
      ...stageDependencies(config, ports, topics),
      ...(embeddings ? { getEmbeddings: async () => embeddings } : {}),
    },
    STAGE_NAMES,
  );
  const subscriptions: Subscription[] = [];
  for (const stage of definitions) {
    const timed = {
      ...stage,
      async handle(event: EventBase, attempt: number, signal: AbortSignal) {
        const started = performance.now();
        try {
          await countedUnder(stage.name, () => stage.handle(event, attempt, signal));
        } finally {
          busyMs[stage.name] += performance.now() - started;
          handled[stage.name] += 1;
        }
      },
    };
    subscriptions.push(
      await runStage(timed, { log: ports.log, documents: ports.documents, topics, retry: config.retry, logger }),
    );
  }
  return {
    busyMs,
    handled,
    async stop() {
      await Promise.allSettled(subscriptions.map((s) => s.stop()));
    },
  };
}

/**
 * Uploads files with `concurrency` requests in flight, as `kb ingest` does (multipart, the file
 * streamed from disk, 429 honoured). Keys are used in turn. Returns the document ids in file order.
 */
export async function uploadFiles(
  url: string,
  keys: readonly string[],
  files: readonly string[],
  concurrency: number,
): Promise<string[]> {
  const ids: string[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const i = next++;
      const file = files[i] as string;
      for (let attempt = 1; ; attempt++) {
        const form = new FormData();
        form.append('file', await openAsBlob(file), path.basename(file));
        const response = await fetch(`${url}/api/v1/documents`, {
          method: 'POST',
          headers: { 'X-API-Key': keys[i % keys.length] as string },
          body: form,
        });
        if (response.status === 429 && attempt < 20) {
          await response.arrayBuffer();
          await new Promise((r) => setTimeout(r, Number(response.headers.get('retry-after') ?? '1') * 1000));
          continue;
        }
        const body = (await response.json()) as { document_id?: string; detail?: string };
        if (response.status !== 201 || !body.document_id) {
          throw new Error(`upload of ${path.basename(file)} answered ${response.status}: ${body.detail ?? ''}`);
        }
        ids[i] = body.document_id;
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  return ids;
}

export interface Completion {
  readonly completed: number;
  readonly failed: number;
  /** Epoch ms of the last version that completed. */
  readonly lastCompletedAt: number;
  readonly chunks: number;
  /** Chunk count of each completed document, by document name. */
  readonly chunkCounts: Map<string, number>;
  /** Failure codes of failed documents, for the report. */
  readonly failures: string[];
}

/**
 * Waits until `expected` documents of the workspace are `completed` or `failed`, counting them in
 * the store once a second (the figures use the versions' `completed_at`, not when this notices).
 * The counts are the bench's own requests, not the pipeline's: they are counted apart
 * (`countedApart`), and the runs report them separately from the engine requests per document.
 */
export async function waitForIngestion(
  documents: DocumentStore,
  workspaceId: string,
  expected: number,
  timeoutMs: number,
): Promise<Completion> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [completed, failed] = await countedApart(() =>
      Promise.all([
        documents.listDocuments({ workspaceId, status: 'completed', limit: 0 }),
        documents.listDocuments({ workspaceId, status: 'failed', limit: 0 }),
      ]),
    );
    if (completed.total + failed.total >= expected) break;
    if (Date.now() > deadline) {
      throw new Error(
        `ingestion did not finish within ${Math.round(timeoutMs / 1000)} s: ${completed.total} completed, ${failed.total} failed of ${expected}`,
      );
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  let lastCompletedAt = 0;
  let completed = 0;
  let failed = 0;
  let chunks = 0;
  const chunkCounts = new Map<string, number>();
  const failures: string[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await countedApart(() => documents.listDocuments({ workspaceId, limit: 500, offset }));
    for (const doc of page.documents) {
      const v = doc.latest;
      if (v.status === 'completed') {
        completed++;
        chunks += v.chunkCount;
        chunkCounts.set(v.name, v.chunkCount);
        lastCompletedAt = Math.max(lastCompletedAt, Date.parse(v.completedAt ?? ''));
      } else if (v.status === 'failed') {
        failed++;
        if (failures.length < 5) failures.push(`${v.name}: ${v.error?.code} ${v.error?.message ?? ''}`.slice(0, 200));
      }
    }
    if (page.documents.length < 500) break;
  }
  return { completed, failed, lastCompletedAt, chunks, chunkCounts, failures };
}

/**
 * JSON requests over keep-alive connections of their own. A benchmark makes one per timed run and
 * closes it afterwards, so no connection idles across a phase in which this process is busy (a
 * server closing an idle connection while the client is blocked is a race the client can lose).
 */
export function createJsonClient(connections: number): {
  post(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: string }>;
  close(): void;
} {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  return {
    post(url, body, headers) {
      const payload = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const request = http.request(
          url,
          {
            method: 'POST',
            agent,
            headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          },
          (response) => {
            const parts: Buffer[] = [];
            response.on('data', (part: Buffer) => parts.push(part));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }),
            );
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}

/** Resident set size of a process in bytes (Linux), or null when it is gone. */
export async function rssOf(pid: number): Promise<number | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far (Linux), or null when it is gone. */
export async function cpuSecondsOf(pid: number): Promise<number | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** Child-process variables of a benchmark instance, quiet and on loopback. */
export function childEnv(instance: Instance, extra: Record<string, string> = {}): Record<string, string> {
  return { ...instance.env, HOST: '127.0.0.1', KB_LOG_LEVEL: 'warn', ...extra };
}

export type { Config };
