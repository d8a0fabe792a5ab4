/**
 * Recognises "out of storage" failures wherever they come from: the filesystem (no space, quota,
 * read-only), SQLite (database or disk full, read-only) and S3-compatible stores (MinIO's storage
 * full and bucket quota, a 507 answer). They are transient for the pipeline (they heal when space
 * is freed) and answered 507 `insufficient-storage` by the API, never 500.
 */
const STORAGE_FULL_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR_WRITE',
  'XMinioStorageFull',
  'XMinioAdminBucketQuotaExceeded',
  'QuotaExceeded',
  'StorageFull',
  'InsufficientStorage',
]);

interface ErrorLike {
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly statusCode?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
  readonly message?: unknown;
}

/** Whether `error`, or anything in its cause chain (or an AggregateError's errors), means storage ran out. */
export function isStorageFull(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 8) return false;
  const e = error as ErrorLike;
  if (typeof e.code === 'string' && STORAGE_FULL_CODES.has(e.code)) return true;
  if (e.statusCode === 507) return true;
  if (typeof e.message === 'string' && /database or disk is full|no space left on device/i.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isStorageFull(inner, depth + 1))) return true;
  return isStorageFull(e.cause, depth + 1);
}
