import { KbError } from '../../errors/kb-error.ts';
import { outboundFetch } from '../../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../../outbound/outbound-policy.ts';
import { createFairGate } from '../../util/fair-gate.ts';
import { parseRetryAfter, spreadRetryAfter } from '../../util/retry-after.ts';
import { backoffDelay, sleep as wait } from '../../util/time.ts';
import { requireBatchSize } from './batched-provider.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

export interface OpenAiEmbeddingOptions {
  /** The API base URL as OpenAI's clients take it (`http://tei:8080/v1`); requests go to `<url>/embeddings`. */
  readonly url: string;
  /** The model name the server knows, sent with every request. */
  readonly model: string;
  /** Sent as `Authorization: Bearer <key>`; null or absent sends none. */
  readonly apiKey?: string | null;
  /** Texts per request (default 32). */
  readonly batchSize?: number;
  /** Requests in flight at once, whoever calls (default 1). */
  readonly concurrency?: number;
  /** The vector size the server must answer; null or absent: the size of its first answer. */
  readonly dimensions?: number | null;
  /** Bound of one request, body included (default 60 s). */
  readonly timeoutMs?: number;
  /** Which addresses may be reached (`KB_OUTBOUND_ALLOW_PRIVATE`). */
  readonly policy: OutboundPolicy;
  /** Attempts per request before giving up on 408/429/5xx, timeouts and connection failures (default 5). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per attempt, with jitter (default 500 ms). */
  readonly baseDelayMs?: number;
  /** Longest backoff delay without a `Retry-After` (default 20 s). */
  readonly maxDelayMs?: number;
  /** Longest `Retry-After` that is waited out; a longer one ends the retries at once (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** Waits between attempts; replaceable to observe the delays. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What one attempt came to, when it was not vectors. */
interface Failure {
  readonly transient: boolean;
  readonly retryAfterMs: number | null;
  readonly summary: string;
  readonly error?: unknown;
}

/** The largest answer accepted per text: a float printed in JSON takes at most about 25 bytes. */
const BYTES_PER_NUMBER = 32;
/** Vector size assumed for the answer bound before the first answer tells it. */
const LARGEST_EXPECTED_DIMENSIONS = 8192;

/**
 * The OpenAI embeddings API (`POST <url>/embeddings` with `model` and `input`, answered with
 * `data[].embedding` and `data[].index`) as text-embeddings-inference, vLLM, Infinity, Ollama and
 * OpenAI serve it. Every request goes through the outbound rules ({@link outboundFetch}): a
 * loopback or private server needs `policy.allowPrivate`, a redirect is refused, the answer is
 * bounded in bytes and the exchange in time.
 *
 * Batches of `batchSize` texts; at most `concurrency` requests in flight in this provider, queries
 * taking turns with document batches (a query waits for at most the requests already running).
 * Vectors are put in `index` order and scaled to unit length (servers that do not normalise are
 * fine).
 *
 * Failures: HTTP 408, 429 and 5xx, timeouts and connection errors are retried up to `maxAttempts`
 * times with jittered exponential backoff, waiting out `Retry-After` when the answer carries one;
 * then a retriable `embedding-failed`. Any other status, an answer that is not the API's shape, or
 * a vector of another size is a non-retriable `embedding-failed` at once.
 *
 * Creating the provider asks the server once (a one-text request): it learns the vector size,
 * checks it against `dimensions` when given, and turns a server that refuses the model, the key or
 * the address into a `config-invalid` naming what to change. A server that does not answer yet
 * fails creation with the retriable `embedding-failed` (the runtime builds the provider again on
 * the next use).
 */
export async function createOpenAiEmbeddingProvider(options: OpenAiEmbeddingOptions): Promise<EmbeddingProvider> {
  const batchSize = options.batchSize ?? 32;
  requireBatchSize(batchSize);
  if (!options.model) throw new KbError('config-invalid', 'The openai embedding provider needs a model name');
  const endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 20_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const sleep = options.sleep ?? wait;
  const gate = createFairGate({ slots: options.concurrency ?? 1 });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };
  let dimensions = 0;
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new KbError('internal-error', 'The openai embedding provider is closed');
  };

  /** One request; vectors, or what went wrong. */
  async function attempt(texts: readonly string[]): Promise<Float32Array[] | Failure> {
    let response: Awaited<ReturnType<typeof outboundFetch>>;
    try {
      response = await outboundFetch(
        {
          url: endpoint,
          method: 'POST',
          headers,
          body: JSON.stringify({ model: options.model, input: texts }),
          timeoutMs,
          maxBytes: Math.max(1_000_000, texts.length * (dimensions || LARGEST_EXPECTED_DIMENSIONS) * BYTES_PER_NUMBER),
          redirects: 'none',
        },
        options.policy,
      );
    } catch (error) {
      const code = error instanceof KbError ? error.code : '';
      const summary = error instanceof Error ? error.message : String(error);
      // A timeout or a failed connection may pass; a refused address or an oversized answer will not.
      return { transient: code === 'timeout' || code === 'outbound-failed', retryAfterMs: null, summary, error };
    }
    const { status } = response;
    if (status < 200 || status >= 300) {
      const transient = status === 408 || status === 429 || status >= 500;
      return {
        transient,
        retryAfterMs: transient ? parseRetryAfter(response.headers['retry-after']) : null,
        summary: `HTTP ${status}${serverMessage(response.body)}`,
      };
    }
    return vectorsOf(response.body, texts.length);
  }

  /** Reads an answer: one vector per text, by `index`, of the expected size, unit length. */
  function vectorsOf(body: Buffer, count: number): Float32Array[] {
    const invalid = (why: string) =>
      new KbError('embedding-failed', `The embedding server at ${endpoint} answered ${why}`, { retriable: false });
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid('something that is not JSON');
    }
    const data = (parsed as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw invalid('without a `data` list');
    if (data.length !== count) throw invalid(`${data.length} embeddings for ${count} texts`);
    const rows: Float32Array[] = new Array(count);
    data.forEach((item: unknown, position) => {
      const { index = position, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count || rows[index as number]) {
        throw invalid(`an embedding with index ${JSON.stringify(index)} for ${count} texts`);
      }
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number')) {
        throw invalid('an embedding that is not a list of numbers (is `encoding_format` forced to base64?)');
      }
      if (dimensions === 0) dimensions = embedding.length;
      if (embedding.length !== dimensions) {
        throw invalid(`a ${embedding.length}-dimensional vector for ${options.model}, expected ${dimensions}`);
      }
      rows[index as number] = toUnitVector(embedding as number[], endpoint);
    });
    return rows;
  }

  async function request(texts: readonly string[], share: string): Promise<Float32Array[]> {
    for (let attemptNo = 1; ; attemptNo += 1) {
      assertOpen();
      const outcome = await gate.run(share, () => attempt(texts));
      if (Array.isArray(outcome)) return outcome;
      if (!outcome.transient) {
        throw new KbError(
          'embedding-failed',
          `The embedding server at ${endpoint} refused the request: ${outcome.summary}`,
          {
            cause: outcome.error,
            retriable: false,
          },
        );
      }
      const retryAfterMs = outcome.retryAfterMs;
      const retryAfter = retryAfterMs === null ? undefined : Math.ceil(retryAfterMs / 1000);
      if (attemptNo >= maxAttempts || (retryAfterMs !== null && retryAfterMs > maxRetryAfterMs)) {
        throw new KbError(
          'embedding-failed',
          `The embedding server at ${endpoint} failed after ${attemptNo} attempt${attemptNo === 1 ? '' : 's'}: ${outcome.summary}`,
          { cause: outcome.error, retriable: true, ...(retryAfter === undefined ? {} : { retryAfter }) },
        );
      }
      await sleep(
        retryAfterMs === null
          ? backoffDelay(attemptNo, baseDelayMs, maxDelayMs, Math.random, 0.5)
          : spreadRetryAfter(retryAfterMs),
      );
    }
  }

  async function embed(texts: readonly string[], share: string): Promise<Float32Array[]> {
    assertOpen();
    const batches: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += batchSize) batches.push(request(texts.slice(i, i + batchSize), share));
    return (await Promise.all(batches)).flat();
  }

  try {
    await embed(['dimension probe'], 'query');
  } catch (error) {
    throw startupProblem(error, options, endpoint);
  }
  if (options.dimensions && options.dimensions !== dimensions) {
    throw new KbError(
      'config-invalid',
      `The embedding server at ${endpoint} answers ${dimensions}-dimensional vectors for ${options.model}, ` +
        `but KB_EMBEDDING_DIMENSIONS is ${options.dimensions}. Check the model the server runs, or set KB_EMBEDDING_DIMENSIONS to ${dimensions} (0 accepts any size).`,
    );
  }

  return {
    provider: 'openai',
    model: `openai/${options.model}`,
    dimensions,
    embedDocuments: (texts) => embed(texts, 'documents'),
    async embedQuery(text) {
      const [vector] = await embed([text], 'query');
      return vector as Float32Array;
    },
    async close() {
      if (closed) return;
      closed = true;
      gate.close(new KbError('internal-error', 'The openai embedding provider is closed'));
    },
  };
}

/** A failure of the first request as what to change in the configuration, when it is one. */
function startupProblem(error: unknown, options: OpenAiEmbeddingOptions, endpoint: string): unknown {
  if (!(error instanceof KbError) || error.retriable) return error;
  const refusedAddress = (error.cause as KbError | undefined)?.code === 'outbound-refused';
  const advice = refusedAddress
    ? 'A server on this machine or a private network is reached only with KB_OUTBOUND_ALLOW_PRIVATE=true.'
    : 'Check KB_EMBEDDING_URL (the API base, usually ending in /v1), KB_EMBEDDING_MODEL and KB_EMBEDDING_API_KEY.';
  return new KbError(
    'config-invalid',
    `The openai embedding provider cannot use ${endpoint} with model ${options.model}: ${error.message}. ${advice}`,
    {
      cause: error,
    },
  );
}

/** The server's own words from an error body: OpenAI's `error.message`, TEI's `error`, vLLM's `message`. */
function serverMessage(body: Buffer): string {
  const text = body.toString('utf8').trim();
  if (text === '') return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `: ${text.slice(0, 200)}`;
  }
  const p = parsed as { error?: unknown; message?: unknown; detail?: unknown } | null;
  const nested = (p?.error as { message?: unknown } | null | undefined)?.message;
  const message = [nested, p?.error, p?.message, p?.detail].find((m) => typeof m === 'string' && m !== '');
  return `: ${String(message ?? text).slice(0, 300)}`;
}

function toUnitVector(values: readonly number[], endpoint: string): Float32Array {
  let sum = 0;
  for (const v of values) sum += v * v;
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) {
    throw new KbError('embedding-failed', `The embedding server at ${endpoint} answered a zero or non-finite vector`, {
      retriable: false,
    });
  }
  return Float32Array.from(values, (v) => v / norm);
}
