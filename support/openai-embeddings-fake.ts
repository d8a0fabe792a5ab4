import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWordVectors } from './word-vectors.ts';

/** One request the fake received, whether it was answered with vectors or with an error. */
export interface OpenAiFakeCall {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | null;
  /** The parsed JSON body, or null when it was not a JSON object. */
  readonly body: Record<string, unknown> | null;
  /** The body's `input` as a list when it is a string or a list of strings, else empty. */
  readonly inputs: readonly string[];
  /** HTTP status the fake answered with. */
  readonly status: number;
}

export interface OpenAiFakeFailure {
  /** Status to answer with, e.g. 429, 503 or 400. */
  readonly status: number;
  /** `Retry-After` header value, e.g. `0`, `1` or an HTTP date. */
  readonly retryAfter?: string;
  /** The body to answer with (default: an OpenAI-style `{"error": {"message": …}}`). */
  readonly body?: string;
}

export interface OpenAiEmbeddingsFake {
  /** The API base URL to configure (`http://127.0.0.1:<port>/v1`). */
  readonly url: string;
  /** The one model name the fake serves; any other is answered 404 `model_not_found`. */
  readonly model: string;
  /** The key the fake requires as `Authorization: Bearer <token>`, or null when it requires none. */
  readonly token: string | null;
  readonly dimensions: number;
  /** Every request so far, in arrival order (empty when created with `recordCalls: false`). */
  readonly calls: OpenAiFakeCall[];
  /** Requests that broke the wire format, with the reason; a correct client leaves this empty. */
  readonly violations: string[];
  /** Requests answered with vectors so far, and the texts in them. */
  readonly answered: { requests: number; texts: number };
  /** The most requests it held at once so far (they overlap only with a latency set). */
  readonly peakInFlight: number;
  /** Answers the next `count` well-formed requests with `failure` instead of vectors. */
  failNext(count: number, failure: OpenAiFakeFailure): void;
  /** From now on, answers every request this many milliseconds late. 0 (the default) answers at once. */
  setLatency(ms: number): void;
  /** Forgets the recorded calls, violations, counts and peak, and any failures still queued. */
  reset(): void;
  /** The vector the fake answers for `text` before `scale` (unit length). */
  vectorFor(text: string): Float32Array;
  close(): Promise<void>;
}

export interface OpenAiEmbeddingsFakeOptions {
  /** Default `fake-embed`. */
  readonly model?: string;
  /** Required bearer token; default none (as most self-hosted servers). */
  readonly token?: string | null;
  /** Vector size of every answer (default 384). */
  readonly dimensions?: number;
  /**
   * `words` (default): the word-overlap vectors of {@link createWordVectors}, distinct per text.
   * `pool`: one of 64 fixed vectors picked by a hash of the text, serialised once, so that the fake
   * costs next to nothing (for benchmarks: the same text still gets the same vector).
   */
  readonly vectors?: 'words' | 'pool';
  /** Multiplies every answered vector (default 1): a server that does not normalise. */
  readonly scale?: number;
  /** Lists `data` last text first, each with its `index` (the API allows any order). */
  readonly reverseOrder?: boolean;
  /** Keep every call in `calls` (default true; a benchmark of many requests turns it off). */
  readonly recordCalls?: boolean;
}

/** OpenAI's limit of inputs in one request. */
const MAX_INPUTS = 2048;
const KNOWN_FIELDS = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);
const POOL_SIZE = 64;

/**
 * A loopback stand-in for the OpenAI embeddings API (`POST /v1/embeddings`) as
 * text-embeddings-inference, vLLM, Infinity, Ollama and OpenAI serve it. It checks the wire format
 * a correct client sends (method, path, bearer token when it has one, a JSON body with `model`,
 * `input` as a string or 1..2048 non-empty strings, optional `encoding_format: "float"`,
 * `dimensions` and `user`, nothing else) and answers 400/401/404 with an OpenAI-style error
 * otherwise, recording the reason in `violations`; an unknown model is answered 404
 * `model_not_found`, as OpenAI does. Answers carry `data[].embedding` with `index`, `model` and
 * `usage`.
 */
export async function startOpenAiEmbeddingsFake(
  options: OpenAiEmbeddingsFakeOptions = {},
): Promise<OpenAiEmbeddingsFake> {
  const model = options.model ?? 'fake-embed';
  const token = options.token ?? null;
  const dimensions = options.dimensions ?? 384;
  const scale = options.scale ?? 1;
  const record = options.recordCalls ?? true;
  const calls: OpenAiFakeCall[] = [];
  const violations: string[] = [];
  const failures: OpenAiFakeFailure[] = [];
  const answered = { requests: 0, texts: 0 };
  const vectorFor = createWordVectors(dimensions);
  const scaled = (v: Float32Array) => JSON.stringify(Array.from(v, (x) => x * scale));
  const pool =
    options.vectors === 'pool'
      ? Array.from({ length: POOL_SIZE }, (_, i) => scaled(vectorFor(`pool vector ${i}`)))
      : null;
  const embeddingJson = (text: string): string => {
    if (!pool) return scaled(vectorFor(text));
    let hash = 2166136261;
    for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
    return pool[(hash >>> 0) % POOL_SIZE] as string;
  };
  let latencyMs = 0;
  let inFlight = 0;
  let peakInFlight = 0;

  const server = http.createServer((req, res) => {
    inFlight += 1;
    peakInFlight = Math.max(peakInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Record<string, unknown> | null = null;
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
      } catch {
        body = null;
      }
      const input = body?.input;
      const inputs = typeof input === 'string' ? [input] : Array.isArray(input) ? input.filter(isString) : [];
      const send = (status: number, payload: string, headers: Record<string, string> = {}) => {
        const write = () => {
          inFlight -= 1;
          if (record) {
            calls.push({
              method: req.method ?? '',
              path: req.url ?? '',
              authorization: req.headers.authorization ?? null,
              body,
              inputs,
              status,
            });
          }
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(payload);
        };
        if (latencyMs > 0) setTimeout(write, latencyMs);
        else write();
      };
      const error = (status: number, message: string, code: string) =>
        send(status, JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } }));
      const reject = (status: number, reason: string) => {
        violations.push(reason);
        error(status, reason, 'invalid_request');
      };

      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/embeddings') {
        return reject(404, `unexpected ${req.method} ${req.url}`);
      }
      if (token !== null && req.headers.authorization !== `Bearer ${token}`) {
        return error(401, `Incorrect API key provided: ${req.headers.authorization ?? '(none)'}`, 'invalid_api_key');
      }
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
        return reject(400, `content-type is ${req.headers['content-type'] ?? '(none)'}, not application/json`);
      }
      if (!body) return reject(400, 'body is not a JSON object');
      const problem = checkBody(body);
      if (problem) return reject(400, problem);
      if (body.model !== model) {
        return error(404, `The model \`${String(body.model)}\` does not exist`, 'model_not_found');
      }
      const failure = failures.shift();
      if (failure) {
        const headers: Record<string, string> =
          failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter };
        const payload =
          failure.body ??
          JSON.stringify({ error: { message: `injected failure ${failure.status}`, type: 'server_error' } });
        return send(failure.status, payload, headers);
      }
      answered.requests += 1;
      answered.texts += inputs.length;
      const order = inputs.map((_, i) => i);
      if (options.reverseOrder) order.reverse();
      const data = order.map(
        (i) => `{"object":"embedding","index":${i},"embedding":${embeddingJson(inputs[i] as string)}}`,
      );
      const tokens = inputs.reduce((sum, text) => sum + text.split(/\s+/).length, 0);
      send(
        200,
        `{"object":"list","data":[${data.join(',')}],"model":${JSON.stringify(model)},` +
          `"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens}}}`,
      );
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    model,
    token,
    dimensions,
    calls,
    violations,
    answered,
    get peakInFlight() {
      return peakInFlight;
    },
    failNext(count, failure) {
      for (let i = 0; i < count; i += 1) failures.push(failure);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    reset() {
      calls.length = 0;
      violations.length = 0;
      failures.length = 0;
      answered.requests = 0;
      answered.texts = 0;
      peakInFlight = inFlight;
    },
    vectorFor,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function checkBody(body: Record<string, unknown>): string | null {
  if (typeof body.model !== 'string' || body.model === '') return 'model must be a non-empty string';
  const input = body.input;
  if (typeof input === 'string') {
    if (input === '') return 'input must not be empty';
  } else if (Array.isArray(input)) {
    if (input.length === 0) return 'input must not be an empty list';
    if (input.length > MAX_INPUTS) return `too many inputs: ${input.length} > ${MAX_INPUTS}`;
    if (!input.every(isString)) return 'every input must be a string';
    if (input.some((text) => text === '')) return 'inputs must not be empty strings';
  } else {
    return 'input must be a string or a list of strings';
  }
  if (body.encoding_format !== undefined && body.encoding_format !== 'float') {
    return `encoding_format ${JSON.stringify(body.encoding_format)} is not served here; only "float"`;
  }
  const unknown = Object.keys(body).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0) return `unexpected fields: ${unknown.join(', ')}`;
  return null;
}
