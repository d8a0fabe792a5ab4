import { createHash, randomUUID } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';
import type { IdempotencyStore, StoredResponse } from '../ports/idempotency-store/idempotency-store.port.ts';
import { sleep } from '../util/time.ts';
import type { RequestContext } from './request-context.ts';

export type { StoredResponse } from '../ports/idempotency-store/idempotency-store.port.ts';

/** Longest accepted key, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * What a write sent with an `Idempotency-Key` stores with its records (the document store's
 * `writeKey`), so that a later request with the key can find the write once it happened, whether or
 * not the request that made it lived to store its answer.
 */
export interface WriteKey {
  /** A digest of the key's scope, the key and the request's fingerprint: one request's writes share it, no other's. */
  readonly key: string;
  /**
   * An earlier request with this key and this request ended without a stored answer (its process
   * died, or it failed): what it wrote may be there already, so the write looks for it first
   * (`VersionStore.findWrite`) and, when it finds it, answers as that request would have.
   */
  readonly resumed: boolean;
}

/** A request that holds its key: it runs, then stores its answer or gives the key back. */
export interface HeldKey {
  readonly replay: null;
  /** The key the write stores with what it writes. */
  readonly write: WriteKey;
  /**
   * Stores the answer, to be sent again to every retry within the retention time. False when the
   * claim had lapsed and another request took the key over (nothing is stored then).
   */
  complete(response: StoredResponse): Promise<boolean>;
  /**
   * Gives the key back without an answer: the next request with it runs (after a 5xx or a refused
   * request), looking first for what this one may have written.
   */
  release(): Promise<void>;
}

/** What to do with a request that carries an `Idempotency-Key`. */
export type IdempotentStart = HeldKey | { readonly replay: StoredResponse };

export interface IdempotencyService {
  /**
   * The key a client sent, checked: 1 to 255 printable ASCII characters (space to `~`), surrounding
   * spaces ignored; a value in double quotes (a structured-field string) counts without its quotes
   * and escapes. Anything else is `idempotency-key-invalid` (400).
   */
  parseKey(value: string): string;
  /**
   * Claims `key` of the caller (its workspace and API key, or account) for a request described by
   * `fingerprint`. The key's first request gets a {@link HeldKey}; a later request with the same
   * fingerprint gets the stored answer to replay (waiting up to the configured time while the first
   * one is still running; `idempotency-key-in-use`, 409 with `retryAfter`, when it still is); a
   * request with another fingerprint is `idempotency-key-reused` (422), whether the first one has
   * finished or not.
   */
  begin(ctx: RequestContext, key: string, fingerprint: string): Promise<IdempotentStart>;
  /** Removes keys expired for longer than the answers' retention time; returns how many. */
  sweep(): Promise<number>;
}

/** The {@link WriteKey} digest of a request: scope, key and fingerprint, unambiguously joined. */
export function writeKeyOf(scope: string, key: string, fingerprint: string): string {
  return createHash('sha256')
    .update(JSON.stringify([scope, key, fingerprint]))
    .digest('hex');
}

/** SHA-256 of the canonical JSON of `value` (object members in code-point order), as `sha256:<hex>`. */
export function fingerprintOf(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const PRINTABLE = /^[\x20-\x7e]+$/;

/** The content of a structured-field string (RFC 8941) without its quotes, `\"` and `\\` unescaped; null when malformed. */
function unquote(inner: string): string | null {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const char = inner[i];
    if (char === '"') return null;
    if (char === '\\') {
      const next = inner[++i];
      if (next !== '"' && next !== '\\') return null;
      out += next;
    } else out += char;
  }
  return out;
}

const invalid = (why: string) =>
  new KbError(
    'idempotency-key-invalid',
    `The Idempotency-Key header ${why}; send 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, such as a UUID.`,
  );

/** Polling a key still in progress: first after this many ms, doubling up to the most. */
const FIRST_POLL_MS = 25;
const MOST_POLL_MS = 250;

/**
 * `Idempotency-Key` handling for the writes of the API: the first request with a key claims it
 * and runs; its answer is kept for `ttlMs` and given again to any retry of the same request.
 * Keys belong to the workspace and the API key (or account) that sent them, so two clients never
 * share one. A claim is renewed while its request runs; one whose process died before answering
 * lapses after `leaseMs`; then a retry runs again, told that it resumes (a {@link WriteKey} `resumed`), as is a retry after a failure.
 * The sweep keeps expired keys for another `ttlMs`, so that a retry within that time still learns
 * that it resumes a claim that ended without an answer.
 */
export function createIdempotencyService(deps: {
  readonly store: IdempotencyStore;
  /** How long an answer is kept. */
  readonly ttlMs: number;
  /**
   * How long a claim holds without an answer before another request may take the key over; the
   * request holding it renews it every third of that while it runs.
   */
  readonly leaseMs: number;
  /** How long a request waits for a first request with its key that is still running. */
  readonly waitMs: number;
  readonly now?: () => number;
}): IdempotencyService {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  const renewEveryMs = Math.max(100, Math.floor(deps.leaseMs / 3));

  const scopeOf = (ctx: RequestContext) => `${ctx.workspaceId}/${ctx.actorType ?? 'api_key'}:${ctx.keyId}`;

  return {
    parseKey(value) {
      let key = value.trim();
      if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
        const inner = unquote(key.slice(1, -1));
        if (inner === null) throw invalid('is a malformed quoted string');
        key = inner;
      }
      if (key === '') throw invalid('is empty');
      if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw invalid(`is ${key.length} characters long`);
      if (!PRINTABLE.test(key)) throw invalid('holds characters other than printable ASCII');
      return key;
    },

    async begin(ctx, key, fingerprint) {
      const scope = scopeOf(ctx);
      const token = randomUUID();
      const deadline = now() + deps.waitMs;
      let pause = FIRST_POLL_MS;
      for (;;) {
        const at = now();
        const outcome = await store.claim({
          scope,
          key,
          fingerprint,
          token,
          nowMs: at,
          expiresAtMs: at + deps.leaseMs,
        });
        if (outcome.claimed) {
          const { replaced } = outcome;
          // While the request runs, its claim is renewed, so that only a claim whose process is
          // gone lapses (a request held up by an engine longer than the lease is not taken over).
          const renewal = setInterval(() => {
            store.renew(scope, key, token, now(), now() + deps.leaseMs).then(
              (held) => {
                if (!held) clearInterval(renewal);
              },
              () => undefined,
            );
          }, renewEveryMs);
          renewal.unref();
          return {
            replay: null,
            write: {
              key: writeKeyOf(scope, key, fingerprint),
              resumed: replaced?.state === 'in-progress' && replaced.fingerprint === fingerprint,
            },
            complete(response) {
              clearInterval(renewal);
              return store.complete(scope, key, token, response, now() + deps.ttlMs);
            },
            async release() {
              clearInterval(renewal);
              await store.release(scope, key, token, now());
            },
          };
        }
        const { record } = outcome;
        if (record.fingerprint !== fingerprint) {
          throw new KbError(
            'idempotency-key-reused',
            'This Idempotency-Key was already used for another request (another method, path or body); send a new key with a new request.',
          );
        }
        if (record.state === 'completed' && record.response) return { replay: record.response };
        if (now() + pause > deadline) {
          throw new KbError(
            'idempotency-key-in-use',
            'A request with this Idempotency-Key is still being processed; send it again after Retry-After seconds to get its answer.',
            { retryAfter: 1 },
          );
        }
        await sleep(pause);
        pause = Math.min(MOST_POLL_MS, pause * 2);
      }
    },

    sweep: () => store.sweep(now() - deps.ttlMs),
  };
}
