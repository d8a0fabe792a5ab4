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

  constructor(code: ErrorCode, message: string, options: KbErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KbError';
    this.code = code;
    this.retriable = options.retriable ?? catalogueEntry(code).retriable;
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
  }
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

/**
 * Wraps anything thrown into a KbError, keeping KbErrors as they are — except that running out of
 * storage anywhere in the cause chain becomes `insufficient-storage`, whatever wrapped it.
 */
export function toKbError(error: unknown, fallback: ErrorCode = 'internal-error'): KbError {
  if (error instanceof KbError && error.code === 'insufficient-storage') return error;
  if (isStorageFull(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new KbError('insufficient-storage', `Out of storage space: ${message}`, { cause: error });
  }
  if (error instanceof KbError) return error;
  const retriable = isRetriable(error);
  const message = error instanceof Error ? error.message : String(error);
  return new KbError(retriable ? 'engine-unavailable' : fallback, message, { cause: error, retriable });
}
