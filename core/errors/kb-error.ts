import { catalogueEntry, type ErrorCode } from './error-catalogue.ts';
import { isStorageFull } from './storage-errors.ts';
import { isTransientNetworkCode } from './transient-errors.ts';

/** One failed field of a request body, listed in a 422 problem's `errors`. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export interface KbErrorOptions {
  readonly cause?: unknown;
  /** Overrides the catalogue's `retriable` for this occurrence. */
  readonly retriable?: boolean;
  /** Failed fields, for `validation-error`. */
  readonly errors?: readonly FieldError[];
  /** Seconds a client should wait (`Retry-After`), for `rate-limit-exceeded` and `idempotency-key-in-use`. */
  readonly retryAfter?: number;
  /** The engine that could not be used, for `engine-unavailable` (e.g. `OpenSearch`, `Kafka`). */
  readonly engine?: string;
}

/**
 * The service's error. `code` is a key of the error catalogue, which decides the problem kind,
 * title and whether a retry may succeed (the API maps the kind to an HTTP status); `message` is
 * the occurrence's detail, safe to show to a client.
 */
export class KbError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly errors: readonly FieldError[] | undefined;
  readonly retryAfter: number | undefined;
  readonly engine: string | undefined;

  constructor(code: ErrorCode, message: string, options: KbErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KbError';
    this.code = code;
    this.retriable = options.retriable ?? catalogueEntry(code).retriable;
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
    this.engine = options.engine;
  }
}

/**
 * The one way to say that an engine cannot be used right now: it refused or dropped the
 * connection, did not answer in time, or answered that it is overloaded, starting, recovering or
 * moving a leader (HTTP 5xx/429, a red index, a partition without its leader, …). Each adapter's
 * error mapping produces it, naming its engine. It is never a reason to give up on work: a stage
 * waits for the engine without spending attempts, and readiness names the engine while it lasts.
 */
export function engineUnavailable(engine: string, message: string, cause?: unknown): KbError {
  return new KbError('engine-unavailable', message, {
    engine,
    retriable: true,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Whether `error` is an {@link engineUnavailable} error. */
export function isEngineUnavailable(error: unknown): error is KbError {
  return error instanceof KbError && error.code === 'engine-unavailable';
}

export function isKbError(error: unknown): error is KbError {
  return error instanceof KbError;
}

/**
 * Whether retrying the failed operation unchanged may succeed. Unknown errors from engines
 * (connection refused, resets, timeouts) count as retriable; everything else as final.
 */
export function isRetriable(error: unknown): boolean {
  if (isStorageFull(error)) return true;
  if (error instanceof KbError) return error.retriable;
  if (error && typeof error === 'object') {
    if (isTransientNetworkCode((error as { code?: unknown }).code)) return true;
    const retriable = (error as { retriable?: unknown }).retriable;
    if (typeof retriable === 'boolean') return retriable;
    const name = (error as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'ConnectionError' || name === 'NoLivingConnectionsError') return true;
  }
  return false;
}

/** The first `engine-unavailable` KbError in the cause chain of `error` (itself included), if any. */
function engineUnavailableIn(error: unknown): KbError | null {
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    if (isEngineUnavailable(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * Wraps anything thrown into a KbError, keeping KbErrors as they are — except that running out of
 * storage anywhere in the cause chain becomes `insufficient-storage`, whatever wrapped it. An
 * error that is not a KbError but carries an `engine-unavailable` one as its cause is that one;
 * any other transient network failure (connection refused or reset, a timeout) becomes
 * `engine-unavailable` too.
 */
export function toKbError(error: unknown, fallback: ErrorCode = 'internal-error'): KbError {
  if (error instanceof KbError && error.code === 'insufficient-storage') return error;
  if (isStorageFull(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new KbError('insufficient-storage', `Out of storage space: ${message}`, { cause: error });
  }
  if (error instanceof KbError) return error;
  const unavailable = engineUnavailableIn(error);
  if (unavailable) return unavailable;
  const retriable = isRetriable(error);
  const message = error instanceof Error ? error.message : String(error);
  return new KbError(retriable ? 'engine-unavailable' : fallback, message, { cause: error, retriable });
}
