/**
 * The chaos clients' HTTP: a write retried with backoff until the service answers it for good, with
 * one `Idempotency-Key` for all its attempts, and what became of each attempt (answered, refused
 * before it reached the service, or lost after it may have).
 */
import { randomUUID } from 'node:crypto';

/** The request of one logical write; `form` builds a fresh multipart body for each attempt. */
export interface WriteRequest {
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly json?: unknown;
  readonly form?: () => FormData;
}

/** How one logical write ended after its attempts. */
export interface WriteOutcome {
  /** The final answer's status, or 0 when the write was given up without one. */
  readonly status: number;
  /** The final answer's JSON body (null for none or non-JSON). */
  readonly body: Record<string, unknown> | null;
  readonly attempts: number;
  /**
   * Attempts whose request may have reached the service but got no answer (a connection reset or
   * closed mid-request, a timeout): the service may have applied them.
   */
  readonly unanswered: number;
  /** Attempts answered 5xx: the service said it did not apply them. */
  readonly failedAnswers: number;
  /** The key every attempt carried. */
  readonly idempotencyKey: string;
}

export interface ChaosHttp {
  /**
   * Sends a write until it is answered with anything but 5xx, 408, 429 or a 409 with Retry-After
   * (`idempotency-key-in-use`), or `giveUpMs` passed.
   */
  write(request: WriteRequest): Promise<WriteOutcome>;
  /** One read; null when it got no answer (the API is down, say). */
  read<T = Record<string, unknown>>(path: string, json?: unknown): Promise<{ status: number; body: T } | null>;
}

/** Errors that say the connection was refused: the request never reached the service. */
const REFUSED = new Set(['ECONNREFUSED', 'EADDRNOTAVAIL']);

function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return (error as { name?: string }).name ?? 'unknown';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function parse(response: Response): Promise<Record<string, unknown> | null> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export function createChaosHttp(options: {
  /** The API's base URL (the API keeps its port across restarts). */
  readonly url: string;
  readonly key: string;
  /** How long one write is retried before it is given up. */
  readonly giveUpMs: number;
  /** Bound of one attempt. */
  readonly attemptTimeoutMs?: number;
}): ChaosHttp {
  const timeoutMs = options.attemptTimeoutMs ?? 20_000;
  const headers = { 'X-API-Key': options.key };
  return {
    async write(request) {
      const idempotencyKey = randomUUID();
      const deadline = Date.now() + options.giveUpMs;
      let attempts = 0;
      let unanswered = 0;
      let failedAnswers = 0;
      let last: { status: number; body: Record<string, unknown> | null } = { status: 0, body: null };
      for (;;) {
        attempts++;
        try {
          const body: FormData | string | undefined = request.form
            ? request.form()
            : request.json === undefined
              ? undefined
              : JSON.stringify(request.json);
          const response = await fetch(`${options.url}${request.path}`, {
            method: request.method,
            headers: {
              ...headers,
              'Idempotency-Key': idempotencyKey,
              ...(request.json === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body }),
            signal: AbortSignal.timeout(timeoutMs),
          });
          last = { status: response.status, body: await parse(response) };
          // A 409 with Retry-After: the key's first request is still running (or its process died
          // and its claim has not lapsed yet); the answer comes to a later attempt.
          const inUse = response.status === 409 && response.headers.has('retry-after');
          const retriable = response.status >= 500 || response.status === 408 || response.status === 429 || inUse;
          if (!retriable) return { ...last, attempts, unanswered, failedAnswers, idempotencyKey };
          if (response.status >= 500) failedAnswers++;
        } catch (error) {
          if (!REFUSED.has(errorCode(error))) unanswered++;
        }
        if (Date.now() >= deadline) return { ...last, attempts, unanswered, failedAnswers, idempotencyKey };
        // Full-jitter exponential backoff: 250 ms doubling up to 4 s.
        await sleep(Math.random() * Math.min(4000, 250 * 2 ** Math.min(attempts, 6)));
      }
    },

    async read<T>(path: string, json?: unknown) {
      try {
        const response = await fetch(`${options.url}${path}`, {
          method: json === undefined ? 'GET' : 'POST',
          headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(json === undefined ? {} : { body: JSON.stringify(json) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
        return { status: response.status, body: (await parse(response)) as T };
      } catch {
        return null;
      }
    },
  };
}
