import { CohereClientV2, CohereError, CohereTimeoutError } from 'cohere-ai';
import { KbError } from '../../errors/kb-error.ts';
import { parseRetryAfter, spreadRetryAfter as spread } from '../../util/retry-after.ts';
import { backoffDelay, sleep as wait } from '../../util/time.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

export { parseRetryAfter } from '../../util/retry-after.ts';

/** Cohere's limit of texts in one embed call. */
export const COHERE_MAX_BATCH = 96;

/**
 * Vector sizes of Cohere's embedding models (embed-v4.0 at its default output dimension). A model
 * missing here is asked once, at start, with a one-text probe.
 */
export const COHERE_MODEL_DIMENSIONS: Readonly<Record<string, number>> = {
  'embed-v4.0': 1536,
  'embed-english-v3.0': 1024,
  'embed-multilingual-v3.0': 1024,
  'embed-english-light-v3.0': 384,
  'embed-multilingual-light-v3.0': 384,
  'embed-english-v2.0': 4096,
  'embed-english-light-v2.0': 1024,
  'embed-multilingual-v2.0': 768,
};

type InputType = 'search_document' | 'search_query';

export interface CohereEmbeddingOptions {
  readonly apiKey: string;
  /** Cohere model name, e.g. `embed-english-v3.0`. */
  readonly model: string;
  /** API base URL (the SDK appends `/v2/embed`); null or absent uses Cohere's own. */
  readonly baseUrl?: string | null;
  /** Texts per call, at most 96 (the default). */
  readonly batchSize?: number;
  /** Attempts per call before giving up on 429/5xx/timeouts (default 5). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per attempt, with jitter (default 500 ms). */
  readonly baseDelayMs?: number;
  /** Longest backoff delay without a `Retry-After` (default 20 s). */
  readonly maxDelayMs?: number;
  /** Longest `Retry-After` that is waited out; a longer one ends the retries at once (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** Time limit of one HTTP call (default 60 s). */
  readonly timeoutMs?: number;
  /** Waits between attempts; replaceable to observe the delays. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Cohere's embed v2 API through the `cohere-ai` SDK: `search_document` for `embedDocuments`,
 * `search_query` for `embedQuery`, float embeddings, inputs longer than the model's window truncated at
 * the end, at most 96 texts a call (calls of one `embedDocuments` run one after another).
 *
 * Failures: HTTP 408, 429 and 5xx, timeouts and connection errors are retried up to `maxAttempts` times
 * with jittered exponential backoff, waiting out `Retry-After` (seconds or an HTTP date) when the answer
 * carries one; then a retriable `embedding-failed` (with `retryAfter` when known). Any other 4xx (bad
 * request, bad key, unknown model) is a non-retriable `embedding-failed` at once.
 *
 * Dimensions come from {@link COHERE_MODEL_DIMENSIONS}, or a probe call for other models; every answer
 * is checked against them.
 */
export async function createCohereEmbeddingProvider(options: CohereEmbeddingOptions): Promise<EmbeddingProvider> {
  const batchSize = options.batchSize ?? COHERE_MAX_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > COHERE_MAX_BATCH) {
    throw new KbError('config-invalid', `Cohere embedding batch size must be 1..${COHERE_MAX_BATCH}, got ${batchSize}`);
  }
  if (!options.apiKey) throw new KbError('config-invalid', 'The Cohere embedding provider needs an API key');
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 20_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const sleep = options.sleep ?? wait;

  const client = new CohereClientV2({
    token: options.apiKey,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    maxRetries: 0,
    timeoutInSeconds: (options.timeoutMs ?? 60_000) / 1000,
  });
  let closed = false;
  let dimensions = COHERE_MODEL_DIMENSIONS[options.model] ?? 0;

  async function callOnce(texts: readonly string[], inputType: InputType): Promise<Float32Array[]> {
    const response = await client.embed({
      model: options.model,
      texts: [...texts],
      inputType,
      embeddingTypes: ['float'],
      truncate: 'END',
    });
    const rows = response.embeddings.float;
    if (!Array.isArray(rows) || rows.length !== texts.length) {
      throw new KbError(
        'embedding-failed',
        `Cohere returned ${Array.isArray(rows) ? rows.length : 'no'} float embeddings for ${texts.length} texts`,
        { retriable: false },
      );
    }
    return rows.map((row) => {
      if (dimensions === 0) dimensions = row.length;
      if (row.length !== dimensions) {
        throw new KbError(
          'embedding-failed',
          `Cohere model ${options.model} returned a ${row.length}-dimensional vector, expected ${dimensions}`,
          { retriable: false },
        );
      }
      return toUnitVector(row);
    });
  }

  async function callWithRetry(texts: readonly string[], inputType: InputType): Promise<Float32Array[]> {
    for (let attempt = 1; ; attempt += 1) {
      let failure: Failure;
      try {
        return await callOnce(texts, inputType);
      } catch (error) {
        if (error instanceof KbError) throw error;
        failure = classify(error);
      }
      if (!failure.transient) {
        throw new KbError('embedding-failed', `Cohere rejected the embed request: ${failure.summary}`, {
          cause: failure.error,
          retriable: false,
        });
      }
      const retryAfterMs = failure.retryAfterMs;
      const retryAfter = retryAfterMs === null ? undefined : Math.ceil(retryAfterMs / 1000);
      if (attempt >= maxAttempts || (retryAfterMs !== null && retryAfterMs > maxRetryAfterMs)) {
        throw new KbError(
          'embedding-failed',
          `Cohere embed failed after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${failure.summary}`,
          { cause: failure.error, retriable: true, ...(retryAfter === undefined ? {} : { retryAfter }) },
        );
      }
      await sleep(
        retryAfterMs === null ? backoffDelay(attempt, baseDelayMs, maxDelayMs, Math.random, 0.5) : spread(retryAfterMs),
      );
    }
  }

  async function embed(texts: readonly string[], inputType: InputType): Promise<Float32Array[]> {
    if (closed) throw new KbError('internal-error', 'The Cohere embedding provider is closed');
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += batchSize) {
      vectors.push(...(await callWithRetry(texts.slice(i, i + batchSize), inputType)));
    }
    return vectors;
  }

  if (dimensions === 0) await embed(['dimension probe'], 'search_query');

  return {
    provider: 'cohere',
    model: `cohere/${options.model}`,
    dimensions,
    embedDocuments: (texts) => embed(texts, 'search_document'),
    async embedQuery(text) {
      const [vector] = await embed([text], 'search_query');
      return vector as Float32Array;
    },
    async close() {
      closed = true;
    },
  };
}

interface Failure {
  readonly transient: boolean;
  readonly retryAfterMs: number | null;
  readonly summary: string;
  readonly error: unknown;
}

function classify(error: unknown): Failure {
  if (error instanceof CohereTimeoutError) {
    return { transient: true, retryAfterMs: null, summary: 'the call timed out', error };
  }
  if (error instanceof CohereError && error.statusCode !== undefined) {
    const status = error.statusCode;
    const transient = status === 408 || status === 429 || status >= 500;
    const header = error.rawResponse?.headers?.get('retry-after') ?? null;
    return {
      transient,
      retryAfterMs: transient ? parseRetryAfter(header) : null,
      summary: `HTTP ${status}${bodyMessage(error.body)}`,
      error,
    };
  }
  // No HTTP status: the connection failed or the answer was unreadable.
  const message = error instanceof Error ? error.message : String(error);
  return { transient: true, retryAfterMs: null, summary: message || 'the connection failed', error };
}

function bodyMessage(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return `: ${(body as { message: string }).message}`;
  }
  if (typeof body === 'string' && body.length > 0) return `: ${body.slice(0, 200)}`;
  return '';
}

function toUnitVector(values: readonly number[]): Float32Array {
  let sum = 0;
  for (const v of values) sum += v * v;
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) {
    throw new KbError('embedding-failed', 'Cohere returned a zero or non-finite vector', { retriable: false });
  }
  return Float32Array.from(values, (v) => v / norm);
}
