/**
 * Every error code is answered with the HTTP status it always had: the catalogue names a kind,
 * the API maps the kind to the status.
 */
import { describe, expect, it } from 'vitest';
import { problemOf } from '../../apps/api/lib/problem-status.ts';
import { ERROR_CATALOGUE, type ErrorCode } from '../../core/errors/error-catalogue.ts';

const STATUS: Record<ErrorCode, number> = {
  'bad-request': 400,
  'unsupported-type': 400,
  'empty-file': 400,
  'missing-file': 400,
  unauthorized: 401,
  forbidden: 403,
  'password-change-required': 403,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  'tokens-unavailable': 409,
  'payload-too-large': 413,
  'validation-error': 422,
  'rate-limit-exceeded': 429,
  'too-many-streams': 429,
  'backlog-full': 429,
  'deployment-backlog-full': 503,
  'internal-error': 500,
  'service-unavailable': 503,
  'engine-unavailable': 503,
  timeout: 503,
  'insufficient-storage': 507,
  'outbound-refused': 422,
  'outbound-too-large': 422,
  'outbound-failed': 503,
  'config-invalid': 500,
  'unsupported-content': 422,
  'corrupt-file': 422,
  'encrypted-file': 422,
  'decompression-bomb': 422,
  'content-too-large': 422,
  'parse-timeout': 422,
  'parser-crashed': 422,
  'no-text': 422,
  'embedding-failed': 503,
  'model-mismatch': 409,
  'invalid-event': 422,
  superseded: 409,
  'document-deleted': 409,
  'path-refused': 422,
  'source-unreachable': 503,
  'sync-running': 409,
  'deletions-held': 409,
  'source-capped': 413,
  'sync-interrupted': 503,
  'backup-invalid': 422,
  'restore-target-not-empty': 409,
  'idempotency-key-invalid': 400,
  'idempotency-key-reused': 422,
  'idempotency-key-in-use': 409,
};

describe('problem status', () => {
  it('answers every error code with its status, kind and title', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      expect(problemOf(code)).toEqual({
        status: STATUS[code],
        kind: ERROR_CATALOGUE[code].kind,
        title: ERROR_CATALOGUE[code].title,
      });
    }
  });
});
