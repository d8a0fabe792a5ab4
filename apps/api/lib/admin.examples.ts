/**
 * OpenAPI examples of the audit log, the dead letters, the health probes and the error page.
 * Assembled, and typed, in `openapi-examples.ts`.
 */
/** The health and liveness answer. */
const ALIVE = {
  status: 'healthy',
  service: 'kb-document-service',
};

/** The check of an engine that answered. */
function answered(engine: string) {
  return { status: 'healthy', latency_ms: 0.4, message: `${engine} answered` };
}

/** A readiness answer in which every engine but the message log answered. */
function readiness(status: string, messageLog: Record<string, unknown>) {
  return {
    status,
    timestamp: '2026-03-02T07:59:55.378Z',
    version: '0.1.0',
    service: 'kb-document-service',
    checks: {
      database: answered('SQLite'),
      vector_store: answered('SQLite-vec'),
      message_log: messageLog,
      object_store: answered('filesystem'),
      dead_letters: {
        status: 'healthy',
        latency_ms: 0.1,
        message: 'no dead letters',
      },
    },
  };
}

/** A dead letter of the parse stage: a PDF that can never be parsed. */
const DEAD_LETTER = {
  id: '5d0c4a3e-2f1b-5c6d-9e8f-7a6b5c4d3e2f',
  stage: 'parse',
  document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
  workspace_id: 'default',
  version: 1,
  error_code: 'corrupt-file',
  error_message: 'The PDF is truncated: no cross-reference table was found.',
  attempts: 1,
  dead_lettered_at: '2026-03-02T08:00:13.020Z',
  source: { topic: 'kb.document.uploaded', partition: 2, offset: '417' },
  copies: 1,
  replay: null,
};

const REPLAYED = {
  ...DEAD_LETTER,
  replay: {
    at: '2026-03-02T09:12:40.511Z',
    outcome: 'replayed',
    detail: '',
    by: 'account:0199f1c2-6a10-7000-8000-5b8e3f6a1d00',
  },
};

export const ADMIN_EXAMPLES = {
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
          {
            id: '0199f1c3-0b10-7a01-8a01-5b8e3f6a1d30',
            action: 'update',
            workspace_id: 'default',
            document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
            actor: {
              type: 'source',
              id: '0199f1b8-2e40-7c11-8f3a-6d2b9c4e1a57',
              name: 'handbook',
            },
            timestamp: '2026-03-02T08:05:01.774Z',
            version: 3,
            before: { version: 2, metadata: { team: 'docs' } },
            after: { version: 3, metadata: { team: 'docs' } },
            change_reason: 'sync: changed at source',
            trace_id: '0199f1c3-0a02-7c55-9e10-2b7d4c8f6e13',
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
  listDeadLetters: {
    responses: {
      '200': {
        dead_letters: [DEAD_LETTER],
        counts: [
          { stage: 'parse', total: 1, pending: 1 },
          { stage: 'chunk', total: 0, pending: 0 },
          { stage: 'embed', total: 0, pending: 0 },
          { stage: 'index', total: 0, pending: 0 },
        ],
      },
    },
  },
  replayDeadLetters: {
    request: { stage: 'parse' },
    responses: {
      '200': { replayed: 1, skipped: 0, dead_letters: [REPLAYED] },
    },
  },
  getHealth: {
    responses: {
      '200': ALIVE,
    },
  },
  getLiveness: {
    responses: {
      '200': ALIVE,
    },
  },
  getReadiness: {
    responses: {
      '200': readiness('healthy', answered('SQLite log')),
      '503': readiness('unhealthy', {
        status: 'unhealthy',
        latency_ms: null,
        message: 'SQLite log unavailable: no answer within 2000 ms',
      }),
    },
  },
  getErrorPage: {
    responses: {
      '200':
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>404 Not Found</title></head><body><h1>404 Not Found</h1>…</body></html>',
    },
  },
};
