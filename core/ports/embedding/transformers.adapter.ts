import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { KbError } from '../../errors/kb-error.ts';
import { createBatchedProvider, requireBatchSize, unitRows } from './batched-provider.ts';
import type { EmbeddingProvider } from './embedding.port.ts';
import type { PendingRequest, WorkerAnswer } from './embedding-worker.ts';
import { describeModel } from './model-catalog.ts';
import { TRANSFORMERS_WORKER_SOURCE } from './transformers.worker.ts';

const DEFAULT_BATCH_SIZE = 32;
const DIMENSION_PROBE = 'dimension probe';

export interface TransformersEmbeddingOptions {
  /** Model id, e.g. `BAAI/bge-small-en-v1.5`: a folder under `modelPath`, or a model hub repository. */
  readonly model: string;
  /** Folder holding `<model>/` (config.json, tokenizer files, onnx/); null keeps the library's default. */
  readonly modelPath: string | null;
  /** Whether the model may be downloaded from the model hub when it is not found locally. */
  readonly allowRemote: boolean;
  /** Texts handed to the worker per call (default 32); the worker runs the model on fewer, see below. */
  readonly batchSize?: number;
  /** ONNX weight type (`fp32`, `q8`, ...); by default the model's config decides, else fp32 on CPU. */
  readonly dtype?: 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';
  /** ONNX Runtime's intra-op threads (default: the machine's cores). */
  readonly threads?: number;
}

type WorkerMessage = { type: 'ready'; dtype: string | null; perCall: number } | WorkerAnswer;

/**
 * Any ONNX sentence-embedding model through `@huggingface/transformers` (ONNX Runtime on CPU), run in
 * a worker thread of its own so the event loop stays free. Pooling, query prefix and window come
 * from the model catalogue (`model-catalog.ts`): bge-small-en-v1.5 pools the CLS token and puts its
 * instruction before queries; other models pool the mean. Vectors are L2-normalised; the model is
 * tagged `transformers/<model>`; its dimensions are read from a probe embedding at start.
 *
 * - No silent truncation: a text longer than the model's window is embedded in windows cut at word
 *   boundaries and its vector is the token-weighted mean of theirs.
 * - Weight types whose ONNX graphs quantise activations at run time with one scale for the whole
 *   input (`q8`, `int8`, `uint8`) make a text's vector depend on its batch neighbours, so such models
 *   run one text per model call; the worker still takes `batchSize` texts per message.
 * - With `allowRemote` false nothing is fetched: a model missing from `modelPath` fails with a
 *   non-retriable `embedding-failed` that names the folder searched.
 * - One request runs at a time, in arrival order. If the worker dies, calls in flight fail with a
 *   retriable `embedding-failed`; the provider must then be created again.
 */
export async function createTransformersEmbeddingProvider(
  options: TransformersEmbeddingOptions,
): Promise<EmbeddingProvider> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  requireBatchSize(batchSize);
  const spec = describeModel(options.model);
  const localRoot = options.modelPath === null ? null : path.resolve(options.modelPath);
  const require = createRequire(import.meta.url);
  const worker = new Worker(TRANSFORMERS_WORKER_SOURCE, {
    eval: true,
    workerData: {
      transformersModule: require.resolve('@huggingface/transformers'),
      model: options.model,
      localRoot,
      allowRemote: options.allowRemote,
      dtype: options.dtype ?? null,
      threads: options.threads ?? os.availableParallelism(),
      pooling: spec.pooling,
      maxTokens: spec.maxTokens,
      batchSize,
    },
  });
  const pending = new Map<number, PendingRequest>();
  let nextId = 1;
  let stopping = false;
  let broken: KbError | null = null;
  let settleReady: { resolve(): void; reject(error: KbError): void } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = { resolve, reject };
  });
  ready.catch(() => undefined);

  const fail = (error: KbError) => {
    broken ??= error;
    settleReady?.reject(error);
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };
  const updateRef = () => {
    if (pending.size > 0) worker.ref();
    else worker.unref();
  };

  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'ready') {
      settleReady?.resolve();
    } else if (message.type === 'failed') {
      const where = localRoot === null ? 'the default model folder' : localRoot;
      const hint = options.allowRemote
        ? 'it was not found locally and could not be downloaded'
        : `it is not in ${where} and remote models are disabled (KB_TRANSFORMERS_ALLOW_REMOTE=false)`;
      fail(
        new KbError(
          'embedding-failed',
          `The embedding model ${options.model} could not be loaded: ${hint}: ${message.error}`,
          {
            retriable: false,
          },
        ),
      );
      void worker.terminate();
    } else {
      const p = pending.get(message.id);
      if (!p) return;
      pending.delete(message.id);
      if (message.type === 'error') {
        p.reject(
          new KbError('embedding-failed', `The embedding model ${options.model} failed: ${message.error}`, {
            retriable: false,
          }),
        );
      } else if (message.flat.length !== message.dims * p.count || message.dims === 0) {
        p.reject(
          new KbError(
            'embedding-failed',
            `The embedding model returned ${message.flat.length} numbers of width ${message.dims} for ${p.count} texts`,
            { retriable: false },
          ),
        );
      } else {
        try {
          p.resolve(unitRows(message.flat, message.dims, p.count, 'The embedding model'));
        } catch (error) {
          p.reject(error as KbError);
        }
      }
    }
    updateRef();
  });
  worker.on('error', (error) => {
    fail(new KbError('embedding-failed', `The embedding worker crashed: ${error.message}`, { cause: error }));
  });
  worker.on('exit', (code) => {
    if (!stopping) fail(new KbError('embedding-failed', `The embedding worker exited (code ${code})`));
  });

  const embedBatch = async (texts: readonly string[]): Promise<Float32Array[]> => {
    await ready;
    if (broken) throw broken;
    if (texts.length === 0) return [];
    const id = nextId++;
    const result = new Promise<Float32Array[]>((resolve, reject) => {
      pending.set(id, { count: texts.length, resolve, reject });
    });
    updateRef();
    worker.postMessage({ id, texts: [...texts] });
    return result;
  };

  const release = async () => {
    stopping = true;
    for (const p of pending.values()) p.reject(new KbError('internal-error', 'The embedding provider closed'));
    pending.clear();
    await worker.terminate();
  };

  let dimensions: number;
  try {
    const [probe] = await embedBatch([DIMENSION_PROBE]);
    dimensions = (probe as Float32Array).length;
  } catch (error) {
    await release();
    throw error;
  }

  const batched = createBatchedProvider({
    provider: 'transformers',
    model: `transformers/${options.model}`,
    dimensions,
    batchSize,
    embedBatch,
    release,
  });
  return {
    ...batched,
    // Asymmetric models (bge) read queries with their instruction; documents embed as they are.
    embedQuery: (text) => batched.embedQuery(`${spec.queryPrefix}${text}`),
  };
}
