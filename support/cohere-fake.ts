import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWordVectors } from './word-vectors.ts';

/** One request the fake received, whether it was answered with vectors or with an error. */
export interface CohereFakeCall {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | null;
  /** The parsed JSON body, or null when it was not JSON. */
  readonly body: CohereEmbedBody | null;
  /** The body's `texts` when it is a list of strings, else empty. */
  readonly texts: readonly string[];
  /** HTTP status the fake answered with. */
  readonly status: number;
}

export interface CohereEmbedBody {
  readonly model?: unknown;
  readonly texts?: unknown;
  readonly input_type?: unknown;
  readonly embedding_types?: unknown;
  readonly truncate?: unknown;
  readonly [key: string]: unknown;
}

export interface CohereFakeFailure {
  /** Status to answer with, e.g. 429, 503 or 400. */
  readonly status: number;
  /** `Retry-After` header value, e.g. `0`, `1` or an HTTP date. */
  readonly retryAfter?: string;
}

export interface CohereFake {
  /** Base URL to give the SDK (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** The API key the fake accepts as `Authorization: Bearer <token>`. */
  readonly token: string;
  readonly dimensions: number;
  /** Every request so far, in arrival order. */
  readonly calls: CohereFakeCall[];
  /** Requests that broke the wire format, with the reason; a correct client leaves this empty. */
  readonly violations: string[];
  /** Answers the next `count` well-formed requests with `failure` instead of vectors. */
  failNext(count: number, failure: CohereFakeFailure): void;
  /**
   * From now on, answers document embeddings (`search_document`) this many milliseconds late, as a
   * slow provider would; queries stay immediate. 0 (the default) answers at once.
   */
  setLatency(ms: number): void;
  /** Forgets the recorded calls and violations and any failures still queued. */
  reset(): void;
  /** The vector the fake answers for `text` (the same for documents and queries), unit length. */
  vectorFor(text: string): Float32Array;
  close(): Promise<void>;
}

export interface CohereFakeOptions {
  readonly token?: string;
  /** Vector size of every answer (default 1024, as embed-english-v3.0). */
  readonly dimensions?: number;
}

const MAX_TEXTS = 96;
const INPUT_TYPES = new Set(['search_document', 'search_query']);
const TRUNCATE = new Set(['NONE', 'START', 'END']);

/**
 * A loopback stand-in for Cohere's `POST /v2/embed`. It checks the wire format a correct client
 * sends (method, path, bearer token, JSON body with `model`, 1..96 `texts`, `input_type` of
 * `search_document`/`search_query`, `embedding_types` exactly `['float']`, optional `truncate`) and
 * answers 400/401/404 with a reason otherwise, recording the reason in `violations`.
 *
 * Vectors are deterministic ({@link createWordVectors}): texts that share words point the same way.
 */
export async function startCohereFake(options: CohereFakeOptions = {}): Promise<CohereFake> {
  const token = options.token ?? 'fake-cohere-key';
  const dimensions = options.dimensions ?? 1024;
  const calls: CohereFakeCall[] = [];
  const violations: string[] = [];
  const failures: CohereFakeFailure[] = [];
  const vectorFor = createWordVectors(dimensions);

  let latencyMs = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: CohereEmbedBody | null = null;
      try {
        const parsed: unknown = JSON.parse(raw);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as CohereEmbedBody;
      } catch {
        body = null;
      }
      const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        calls.push({
          method: req.method ?? '',
          path: req.url ?? '',
          authorization: req.headers.authorization ?? null,
          body,
          texts: Array.isArray(body?.texts) ? body.texts.filter((t): t is string => typeof t === 'string') : [],
          status,
        });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      const reject = (status: number, reason: string) => {
        violations.push(reason);
        answer(status, { message: reason });
      };

      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v2/embed') {
        return reject(404, `unexpected ${req.method} ${req.url}`);
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        return reject(401, `bad authorization header: ${req.headers.authorization ?? '(none)'}`);
      }
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
        return reject(400, `content-type is ${req.headers['content-type'] ?? '(none)'}, not application/json`);
      }
      if (!body) return reject(400, 'body is not a JSON object');
      const problem = checkBody(body);
      if (problem) return reject(400, problem);

      const failure = failures.shift();
      if (failure) {
        const headers: Record<string, string> =
          failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter };
        return answer(failure.status, { message: `injected failure ${failure.status}` }, headers);
      }
      const texts = body.texts as string[];
      const respond = () =>
        answer(200, {
          id: `fake-${calls.length + 1}`,
          response_type: 'embeddings_by_type',
          texts,
          embeddings: { float: texts.map((text) => Array.from(vectorFor(text))) },
          meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.join(' ').split(/\s+/).length } },
        });
      if (latencyMs > 0 && body.input_type === 'search_document') setTimeout(respond, latencyMs);
      else respond();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    dimensions,
    calls,
    violations,
    setLatency(ms) {
      latencyMs = ms;
    },
    failNext(count, failure) {
      for (let i = 0; i < count; i += 1) failures.push(failure);
    },
    reset() {
      calls.length = 0;
      violations.length = 0;
      failures.length = 0;
    },
    vectorFor,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function checkBody(body: CohereEmbedBody): string | null {
  if (typeof body.model !== 'string' || body.model === '') return 'model must be a non-empty string';
  if (!Array.isArray(body.texts)) return 'texts must be an array';
  if (body.texts.length === 0) return 'texts must not be empty';
  if (body.texts.length > MAX_TEXTS) return `too many texts: ${body.texts.length} > ${MAX_TEXTS}`;
  if (!body.texts.every((t) => typeof t === 'string')) return 'every text must be a string';
  if (typeof body.input_type !== 'string' || !INPUT_TYPES.has(body.input_type)) {
    return `input_type must be search_document or search_query, got ${JSON.stringify(body.input_type)}`;
  }
  const types = body.embedding_types;
  if (!Array.isArray(types) || types.length !== 1 || types[0] !== 'float') {
    return `embedding_types must be ["float"], got ${JSON.stringify(types)}`;
  }
  if (body.truncate !== undefined && !(typeof body.truncate === 'string' && TRUNCATE.has(body.truncate))) {
    return `truncate must be NONE, START or END, got ${JSON.stringify(body.truncate)}`;
  }
  const known = new Set(['model', 'texts', 'input_type', 'embedding_types', 'truncate']);
  const unknown = Object.keys(body).filter((k) => !known.has(k));
  if (unknown.length > 0) return `unexpected fields: ${unknown.join(', ')}`;
  return null;
}
