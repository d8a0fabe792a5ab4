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

/** Version 1 of the example document, as the version list and the version detail show it. */
const VERSION_ONE = {
  version: 1,
  created_at: '2026-03-02T07:59:43.200Z',
  created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
  size_bytes: 66,
  chunk_count: 1,
  status: 'completed',
  change_reason: null,
  restored_from: null,
  content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
  name: 'notes.md',
  mime_type: 'text/markdown',
  tokens: 12,
  served_from: '2026-03-02T07:59:52.536Z',
  served_until: '2026-03-02T07:59:53.680Z',
  archived: false,
  error: null,
};

export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  uploadDocument: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF.\n',
      metadata: { team: 'docs' },
      source: 'upload',
      change_reason: 'first draft',
    },
    responses: {
      '201': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        name: 'notes.md',
        workspace_id: 'default',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        status: 'pending',
        version: 1,
        message: 'Document uploaded and queued for processing.',
      },
    },
  },
  listDocuments: {
    responses: {
      '200': {
        documents: [
          {
            id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            status: 'completed',
            version: 1,
            metadata: {
              team: 'docs',
            },
            stats: {
              chunks: 1,
              tokens: 12,
            },
            created_at: '2026-03-02T07:59:43.200Z',
            updated_at: '2026-03-02T07:59:52.536Z',
          },
        ],
        pagination: {
          has_more: false,
          next_cursor: null,
          total: 1,
        },
      },
    },
  },
  getDocument: {
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'completed',
        version: 1,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 1,
          tokens: 12,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:52.536Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        source: 'upload',
        served_version: 1,
        error: null,
      },
    },
  },
  replaceDocumentContent: {
    request: {
      file: '# Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.\n',
      change_reason: 'typo fixes',
    },
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'pending',
        version: 2,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 0,
          tokens: 0,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:52.962Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 74,
        content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a44-7004-8004-5b8e3f6a1d25',
        source: 'upload',
        served_version: 1,
        error: null,
      },
    },
  },
  updateDocumentMetadata: {
    request: {
      metadata: {
        team: 'docs',
        reviewed: true,
      },
      change_reason: 'review',
    },
    responses: {
      '200': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'completed',
        version: 3,
        metadata: {
          team: 'docs',
          reviewed: true,
        },
        stats: {
          chunks: 1,
          tokens: 14,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:54.132Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 74,
        content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a44-7004-8004-5b8e3f6a1d25',
        source: 'upload',
        served_version: 3,
        error: null,
      },
    },
  },
  deleteDocument: {
    responses: {},
  },
  reprocessDocument: {
    responses: {
      '202': {
        id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        status: 'pending',
        version: 4,
        metadata: {
          team: 'docs',
        },
        stats: {
          chunks: 1,
          tokens: 12,
        },
        created_at: '2026-03-02T07:59:43.200Z',
        updated_at: '2026-03-02T07:59:55.246Z',
        name: 'notes.md',
        workspace_id: 'default',
        mime_type: 'text/markdown',
        size_bytes: 66,
        content_hash: '6699b3c67ed34786abff02058b110439699d25a51c3ae7aa5c33e23b5b9c54d8',
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
        source: 'upload',
        served_version: 4,
        error: null,
      },
    },
  },
  listVersions: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        versions: [
          {
            version: 3,
            created_at: '2026-03-02T07:59:53.852Z',
            created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            size_bytes: 74,
            chunk_count: 1,
            status: 'completed',
            change_reason: 'review',
            restored_from: null,
            content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
            name: 'notes.md',
            mime_type: 'text/markdown',
            tokens: 14,
            served_from: '2026-03-02T07:59:54.132Z',
            served_until: null,
            archived: false,
            error: null,
          },
          {
            version: 2,
            created_at: '2026-03-02T07:59:52.962Z',
            created_by: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            size_bytes: 74,
            chunk_count: 1,
            status: 'completed',
            change_reason: 'typo fixes',
            restored_from: null,
            content_hash: 'c27ceea07f632e4c3a8bebc3eeb4c7216cd4242b82536ad36a8c6f1de75a0d82',
            name: 'notes.md',
            mime_type: 'text/markdown',
            tokens: 14,
            served_from: '2026-03-02T07:59:53.680Z',
            served_until: '2026-03-02T07:59:54.132Z',
            archived: false,
            error: null,
          },
          VERSION_ONE,
        ],
      },
    },
  },
  compareVersions: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        from_version: 1,
        to_version: 2,
        changes: {
          added_chunks: 0,
          removed_chunks: 0,
          modified_chunks: 1,
          unchanged_chunks: 0,
          diff: [
            {
              type: 'modified',
              from_index: 0,
              to_index: 0,
              old_content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF.',
              new_content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            },
          ],
        },
      },
    },
  },
  getVersion: {
    responses: {
      '200': {
        ...VERSION_ONE,
        metadata: {
          team: 'docs',
        },
        storage_url:
          'kb://workspaces/default/documents/0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20/uploads/0199f1c2-7a41-7001-8001-5b8e3f6a1d22',
      },
    },
  },
  rollbackDocument: {
    request: {
      target_version: 1,
    },
    responses: {
      '201': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 4,
        restored_from: 1,
        status: 'completed',
      },
    },
  },
  listChunks: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 3,
        chunks: [
          {
            id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20:3:0',
            index: 0,
            content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            tokens: 14,
            start_offset: 0,
            end_offset: 71,
            page: null,
            metadata: {
              headings: ['Release notes'],
            },
          },
        ],
        pagination: {
          has_more: false,
          next_cursor: null,
          total: 1,
        },
      },
    },
  },
  getDocumentContext: {
    responses: {
      '200': {
        document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
        version: 3,
        content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
        tokens: 14,
        chunk_count: 1,
      },
    },
  },
  search: {
    request: {
      query: 'export dashboard reports',
      mode: 'hybrid',
      limit: 5,
      filters: {
        metadata: {
          team: 'docs',
        },
      },
    },
    responses: {
      '200': {
        query: 'export dashboard reports',
        mode: 'hybrid',
        as_of: null,
        results: [
          {
            chunk_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20:3:0',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            document_name: 'notes.md',
            version: 3,
            index: 0,
            score: 1,
            content: 'Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.',
            highlights: ['Release notes The aurora <em>dashboard</em> now exports <em>reports</em> as PDF and CSV.'],
            metadata: {
              team: 'docs',
              reviewed: true,
            },
            page: null,
          },
        ],
        took_ms: 41.7,
      },
    },
  },
  listAuditLogs: {
    responses: {
      '200': {
        entries: [
          {
            id: '0199f1c2-7a42-7002-8002-5b8e3f6a1d23',
            action: 'create',
            workspace_id: 'default',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            actor: {
              type: 'api_key',
              id: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            },
            timestamp: '2026-03-02T07:59:43.209Z',
            version: 1,
            before: null,
            after: {
              version: 1,
              metadata: {
                team: 'docs',
              },
            },
            change_reason: null,
            trace_id: '0199f1c2-7a40-7000-8000-5b8e3f6a1d21',
          },
          {
            id: '0199f1c2-7a45-7005-8005-5b8e3f6a1d26',
            action: 'update',
            workspace_id: 'default',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            actor: {
              type: 'api_key',
              id: '0f3b8a52-61c9-4d27-b4de-2a9c7e15f084',
            },
            timestamp: '2026-03-02T07:59:52.963Z',
            version: 2,
            before: {
              version: 1,
              metadata: {
                team: 'docs',
              },
            },
            after: {
              version: 2,
              metadata: {
                team: 'docs',
              },
            },
            change_reason: 'typo fixes',
            trace_id: '0199f1c2-7a43-7003-8003-5b8e3f6a1d24',
          },
        ],
        pagination: {
          has_more: true,
          next_cursor: 'eyJhIjoiMDFhMjExYjctZTA4My03NjVjLTkzNGQtNjg3OTk0MDYyZjhlIn0',
          total: 4,
        },
      },
    },
  },
  getHealth: {
    responses: {
      '200': {
        status: 'healthy',
        service: 'kb-document-service',
      },
    },
  },
  getLiveness: {
    responses: {
      '200': {
        status: 'healthy',
        service: 'kb-document-service',
      },
    },
  },
  getReadiness: {
    responses: {
      '200': {
        status: 'healthy',
        timestamp: '2026-03-02T07:59:55.378Z',
        version: '0.1.0',
        service: 'kb-document-service',
        checks: {
          database: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'SQLite answered',
          },
          vector_store: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'SQLite-vec answered',
          },
          message_log: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'SQLite log answered',
          },
          object_store: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'filesystem answered',
          },
        },
      },
      '503': {
        status: 'unhealthy',
        timestamp: '2026-03-02T07:59:55.378Z',
        version: '0.1.0',
        service: 'kb-document-service',
        checks: {
          database: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'SQLite answered',
          },
          vector_store: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'SQLite-vec answered',
          },
          message_log: {
            status: 'unhealthy',
            latency_ms: null,
            message: 'SQLite log did not answer',
          },
          object_store: {
            status: 'healthy',
            latency_ms: 0.4,
            message: 'filesystem answered',
          },
        },
      },
    },
  },
  getErrorPage: {
    responses: {
      '200':
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>404 Not Found</title></head><body><h1>404 Not Found</h1>…</body></html>',
    },
  },
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
};
