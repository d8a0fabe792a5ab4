/**
 * The one error catalogue: every error code the service can produce, with the problem kind (last
 * path segment of the problem `type`), a short title, and whether the operation that raised it
 * may succeed if retried unchanged.
 *
 * The HTTP API turns a {@link KbError} into RFC 7807 problem details from this table and its own
 * kind-to-status map; the stage runner uses `retriable` to choose between backoff-and-retry and
 * the dead-letter topic.
 */
export const PROBLEM_KINDS = [
  'bad-request',
  'unauthorized',
  'forbidden',
  'not-found',
  'method-not-allowed',
  'conflict',
  'payload-too-large',
  'validation-error',
  'rate-limit-exceeded',
  'internal-error',
  'service-unavailable',
  'insufficient-storage',
] as const;
export type ProblemKind = (typeof PROBLEM_KINDS)[number];

export interface CatalogueEntry {
  readonly kind: ProblemKind;
  readonly title: string;
  readonly retriable: boolean;
}

const entry = (kind: ProblemKind, title: string, retriable = false): CatalogueEntry => ({
  kind,
  title,
  retriable,
});

export const ERROR_CATALOGUE = {
  // Request errors.
  'bad-request': entry('bad-request', 'Bad Request'),
  'unsupported-type': entry('bad-request', 'Unsupported file type'),
  'empty-file': entry('bad-request', 'Empty file'),
  'missing-file': entry('bad-request', 'Missing file'),
  unauthorized: entry('unauthorized', 'Unauthorized'),
  forbidden: entry('forbidden', 'Forbidden'),
  // A dashboard session of an account whose password the service generated: only the password
  // change and sign-out answer until the person chooses a password.
  'password-change-required': entry('forbidden', 'Password change required'),
  'not-found': entry('not-found', 'Not Found'),
  'method-not-allowed': entry('method-not-allowed', 'Method Not Allowed'),
  conflict: entry('conflict', 'Conflict', true),
  'payload-too-large': entry('payload-too-large', 'Payload Too Large'),
  'validation-error': entry('validation-error', 'Validation Error'),
  'rate-limit-exceeded': entry('rate-limit-exceeded', 'Rate Limit Exceeded', true),
  // A caller holds as many open event streams as it may (`KB_MAX_STREAMS_PER_KEY`).
  'too-many-streams': entry('rate-limit-exceeded', 'Too many open event streams', true),
  'internal-error': entry('internal-error', 'Internal Server Error'),
  'service-unavailable': entry('service-unavailable', 'Service Unavailable', true),
  // Backpressure: the ingestion backlog of the caller's workspace (429), or of the whole
  // deployment (503), is at its bound (`KB_MAX_BACKLOG_PER_WORKSPACE`, `KB_MAX_BACKLOG`); writes
  // that queue ingestion wait for `Retry-After`, derived from how fast the backlog drains.
  'backlog-full': entry('rate-limit-exceeded', 'Ingestion backlog full', true),
  'deployment-backlog-full': entry('service-unavailable', 'Ingestion backlog of the service full', true),

  // Scoped tokens need a signing key: `KB_TOKEN_SECRET` on the distributed runtime.
  'tokens-unavailable': entry('conflict', 'Scoped tokens are not set up'),

  // Idempotency-Key: a malformed key; a key already used for another request; a key whose first
  // request is still running (retry after Retry-After to get its answer).
  'idempotency-key-invalid': entry('bad-request', 'Invalid Idempotency-Key'),
  'idempotency-key-reused': entry('validation-error', 'Idempotency-Key used for another request'),
  'idempotency-key-in-use': entry('conflict', 'Idempotency-Key in use', true),

  // Infrastructure errors: an engine did not answer, or answered that it is busy.
  'engine-unavailable': entry('service-unavailable', 'Engine unavailable', true),
  timeout: entry('service-unavailable', 'Operation timed out', true),
  // The disk, the database or the bucket is full (or read-only): heals when space is freed.
  'insufficient-storage': entry('insufficient-storage', 'Insufficient Storage', true),

  // Outbound requests (sync sources, webhook deliveries).
  'outbound-refused': entry('validation-error', 'Target address not allowed'),
  'outbound-too-large': entry('validation-error', 'Remote content exceeds the size limit'),
  'outbound-failed': entry('service-unavailable', 'Remote target could not be reached', true),

  // Configuration errors: the service was started with settings it cannot run with.
  'config-invalid': entry('internal-error', 'Invalid configuration'),

  // Ingestion errors: recorded on a failed document version as `error.code`.
  'unsupported-content': entry('validation-error', 'Unsupported content'),
  'corrupt-file': entry('validation-error', 'Corrupt or malformed file'),
  'encrypted-file': entry('validation-error', 'Encrypted file'),
  'decompression-bomb': entry('validation-error', 'Archive inflates beyond the limits'),
  'content-too-large': entry('validation-error', 'Content exceeds the processing limits'),
  'parse-timeout': entry('validation-error', 'Parsing took longer than the task timeout'),
  'parser-crashed': entry('validation-error', 'Parser ran out of memory or crashed'),
  'no-text': entry('validation-error', 'No text could be extracted'),
  'embedding-failed': entry('service-unavailable', 'Embedding provider failed', true),
  'model-mismatch': entry('conflict', 'Embedding model differs from the index model'),
  'invalid-event': entry('validation-error', 'Event does not match its schema'),
  superseded: entry('conflict', 'A newer version replaced this one before its ingestion finished'),
  'document-deleted': entry('conflict', 'The document was deleted before this version finished ingestion'),

  // Sources of synchronisation: refused locations, and what a run records of how it went.
  'path-refused': entry('validation-error', 'Path outside the allowed folders'),
  'source-unreachable': entry('service-unavailable', 'Source cannot be read', true),
  'sync-running': entry('conflict', 'A sync of this source is running', true),
  'deletions-held': entry('conflict', 'Deletions held back: too many documents would go'),
  'source-capped': entry('payload-too-large', 'The source lists more items than a run takes'),
  'sync-interrupted': entry('service-unavailable', 'The process running the sync stopped', true),

  // Backup and restore (`kb backup`, `kb restore`).
  'backup-invalid': entry('validation-error', 'Backup damaged or incomplete'),
  'restore-target-not-empty': entry('conflict', 'Restore target is not empty'),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export function catalogueEntry(code: string): CatalogueEntry {
  return (ERROR_CATALOGUE as Record<string, CatalogueEntry>)[code] ?? ERROR_CATALOGUE['internal-error'];
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, code);
}
