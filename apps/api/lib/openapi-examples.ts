import { ADMIN_EXAMPLES } from './admin.examples.ts';
import { DOCUMENT_LOOKUP_EXAMPLES } from './document-lookup.examples.ts';
import { DOCUMENT_EXAMPLES } from './documents.examples.ts';
import { SEARCH_EXAMPLES } from './search.examples.ts';
import { SOURCE_EXAMPLES } from './sources.examples.ts';
import { VERSION_EXAMPLES } from './versions.examples.ts';
import { WEBHOOK_EXAMPLES } from './webhooks.examples.ts';

/**
 * Examples of every request and response body of the OpenAPI document, keyed by operation id
 * (the `/v1` aliases share them). Taken from the service's own answers; a unit test checks each
 * against its schema.
 */
export interface OperationExamples {
  readonly request?: unknown;
  /** By status code. */
  readonly responses: Readonly<Record<string, unknown>>;
}

export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  ...DOCUMENT_EXAMPLES,
  ...DOCUMENT_LOOKUP_EXAMPLES,
  ...VERSION_EXAMPLES,
  ...SEARCH_EXAMPLES,
  ...ADMIN_EXAMPLES,
  ...SOURCE_EXAMPLES,
  ...WEBHOOK_EXAMPLES,
};

/** One problem+json example per error status. */
export const PROBLEM_EXAMPLES: Readonly<Record<string, unknown>> = {
  '400': {
    type: 'http://127.0.0.1:8080/errors/bad-request',
    title: 'Bad Request',
    status: 400,
    detail: 'querystring/limit must be <= 100',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
  },
  '401': {
    type: 'http://127.0.0.1:8080/errors/unauthorized',
    title: 'Unauthorized',
    status: 401,
    detail: 'The API key is invalid or has been revoked.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
    error: {
      code: 'unauthorized',
      message: 'The API key is invalid or has been revoked.',
    },
  },
  '403': {
    type: 'http://127.0.0.1:8080/errors/forbidden',
    title: 'Forbidden',
    status: 403,
    detail: "This API key lacks the 'write' permission.",
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
    error: {
      code: 'forbidden',
      message: "This API key lacks the 'write' permission.",
    },
  },
  '404': {
    type: 'http://127.0.0.1:8080/errors/not-found',
    title: 'Not Found',
    status: 404,
    detail: 'Document 0199aaaa-0000-7000-8000-000000000000 was not found.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
  },
  '409': {
    type: 'http://127.0.0.1:8080/errors/conflict',
    title: 'Conflict',
    status: 409,
    detail: 'Version 2 is processing; versions compare once completed.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
  },
  '413': {
    type: 'http://127.0.0.1:8080/errors/payload-too-large',
    title: 'Payload Too Large',
    status: 413,
    detail: 'The file is 60817408 bytes; the limit is 52428800 bytes.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
  },
  '422': {
    type: 'http://127.0.0.1:8080/errors/validation-error',
    title: 'Validation Error',
    status: 422,
    detail: 'The request body failed validation: metadata must be object.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
    errors: [
      {
        field: 'metadata',
        message: 'must be object',
      },
    ],
  },
  '429': {
    type: 'http://127.0.0.1:8080/errors/rate-limit-exceeded',
    title: 'Rate Limit Exceeded',
    status: 429,
    detail: 'Rate limit of 100 requests per minute exceeded for this key; retry in 12 s.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
    error: {
      code: 'rate_limit_exceeded',
      message: 'Rate limit of 100 requests per minute exceeded for this key; retry in 12 s.',
      retry_after: 12,
    },
  },
  '503': {
    type: 'http://127.0.0.1:8080/errors/service-unavailable',
    title: 'Service Unavailable',
    status: 503,
    detail: 'A backing service is unavailable or busy. Retry later, with backoff.',
    instance: '/api/v1/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
    trace_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
    timestamp: '2026-03-02T08:00:12.345Z',
  },
  '507': {
    type: 'http://127.0.0.1:8080/errors/insufficient-storage',
    title: 'Insufficient Storage',
    status: 507,
    detail:
      'The service has run out of storage space, and nothing of this request was stored. Retry once space is freed (deleting or purging documents frees it).',
    instance: '/api/v1/documents',
    trace_id: '0199f1c2-8b11-7e56-a1c4-4d6f2b9e0a18',
    timestamp: '2026-03-02T08:00:13.345Z',
  },
};
