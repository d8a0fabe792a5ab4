/**
 * The one error catalogue: every error code the service can produce, with the HTTP status, the
 * problem kind (last path segment of the problem `type`), a short title, and whether the operation
 * that raised it may succeed if retried unchanged.
 *
 * HTTP handlers turn a {@link KbError} into RFC 7807 problem details from this table; the stage
 * runner uses `retriable` to choose between backoff-and-retry and the dead-letter topic.
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
] as const;
export type ProblemKind = (typeof PROBLEM_KINDS)[number];

export interface CatalogueEntry {
  readonly status: number;
  readonly kind: ProblemKind;
  readonly title: string;
  readonly retriable: boolean;
}

const entry = (status: number, kind: ProblemKind, title: string, retriable = false): CatalogueEntry => ({
  status,
  kind,
  title,
  retriable,
});

export const ERROR_CATALOGUE = {
  // Request errors.
  'bad-request': entry(400, 'bad-request', 'Bad Request'),
  'unsupported-type': entry(400, 'bad-request', 'Unsupported file type'),
  'empty-file': entry(400, 'bad-request', 'Empty file'),
  'missing-file': entry(400, 'bad-request', 'Missing file'),
  unauthorized: entry(401, 'unauthorized', 'Unauthorized'),
  forbidden: entry(403, 'forbidden', 'Forbidden'),
  'not-found': entry(404, 'not-found', 'Not Found'),
  'method-not-allowed': entry(405, 'method-not-allowed', 'Method Not Allowed'),
  conflict: entry(409, 'conflict', 'Conflict', true),
  'payload-too-large': entry(413, 'payload-too-large', 'Payload Too Large'),
  'validation-error': entry(422, 'validation-error', 'Validation Error'),
  'rate-limit-exceeded': entry(429, 'rate-limit-exceeded', 'Rate Limit Exceeded', true),
  'internal-error': entry(500, 'internal-error', 'Internal Server Error'),
  'service-unavailable': entry(503, 'service-unavailable', 'Service Unavailable', true),

  // Infrastructure errors: an engine did not answer, or answered that it is busy.
  'engine-unavailable': entry(503, 'service-unavailable', 'Engine unavailable', true),
  timeout: entry(503, 'service-unavailable', 'Operation timed out', true),

  // Ingestion errors: recorded on a failed document version as `error.code`.
  'unsupported-content': entry(422, 'validation-error', 'Unsupported content'),
  'corrupt-file': entry(422, 'validation-error', 'Corrupt or malformed file'),
  'encrypted-file': entry(422, 'validation-error', 'Encrypted file'),
  'decompression-bomb': entry(422, 'validation-error', 'Archive inflates beyond the limits'),
  'content-too-large': entry(422, 'validation-error', 'Content exceeds the processing limits'),
  'parse-timeout': entry(422, 'validation-error', 'Parsing took longer than the task timeout'),
  'parser-crashed': entry(422, 'validation-error', 'Parser ran out of memory or crashed'),
  'no-text': entry(422, 'validation-error', 'No text could be extracted'),
  'embedding-failed': entry(503, 'service-unavailable', 'Embedding provider failed', true),
  'model-mismatch': entry(409, 'conflict', 'Embedding model differs from the index model'),
  'invalid-event': entry(422, 'validation-error', 'Event does not match its schema'),
  superseded: entry(409, 'conflict', 'A newer version replaced this one before its ingestion finished'),
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export function catalogueEntry(code: string): CatalogueEntry {
  return (ERROR_CATALOGUE as Record<string, CatalogueEntry>)[code] ?? ERROR_CATALOGUE['internal-error'];
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, code);
}
