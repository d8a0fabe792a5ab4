/**
 * OpenAPI examples of the webhook endpoints and the event stream.
 * Assembled, and typed, in `openapi-examples.ts`.
 */
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/7EqHj9HYvo=';

const ENDPOINT = {
  id: '6b0d8a52-3f1e-4c2a-9a55-0f6b1c2d3e4f',
  url: 'https://hooks.example.com/kb',
  events: ['document.version.completed', 'document.version.failed'],
  description: 'Re-index the chat bot',
  enabled: true,
  disabled_reason: null,
  failing_since: null,
  created_at: '2026-03-02T08:00:12.345Z',
  updated_at: '2026-03-02T08:00:12.345Z',
};

const DELIVERY = {
  id: '3f9c1e20-5b7a-4d1e-8c2b-9a0e1f2d3c4b',
  endpoint_id: ENDPOINT.id,
  event_id: '0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17',
  event_type: 'document.version.completed',
  document_id: '0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20',
  source_id: null,
  status: 'delivered',
  attempts: 2,
  next_attempt_at: null,
  created_at: '2026-03-02T08:00:14.100Z',
  delivered_at: '2026-03-02T08:00:19.412Z',
  attempt_log: [
    {
      attempt: 1,
      at: '2026-03-02T08:00:14.120Z',
      status_code: 503,
      error: 'The receiver answered 503.',
      duration_ms: 41,
    },
    { attempt: 2, at: '2026-03-02T08:00:19.380Z', status_code: 200, error: null, duration_ms: 32 },
  ],
};

/** A source's sync run: about the source, no document. */
const SOURCE_DELIVERY = {
  ...DELIVERY,
  id: '6a2d4f10-9c3e-4b8a-a1d7-2e5f8c0b9d31',
  event_id: '0199f1c3-0c22-7a10-b4e2-7d1c9e3f5a08',
  event_type: 'source.sync.completed',
  document_id: null,
  source_id: '0199f1b8-2e40-7c11-8f3a-6d2b9c4e1a57',
  attempts: 1,
  created_at: '2026-03-02T08:05:02.010Z',
  delivered_at: '2026-03-02T08:05:02.061Z',
  attempt_log: [{ attempt: 1, at: '2026-03-02T08:05:02.030Z', status_code: 200, error: null, duration_ms: 29 }],
};

const PENDING_TEST = {
  ...DELIVERY,
  event_type: 'webhook.test',
  document_id: null,
  status: 'pending',
  attempts: 0,
  next_attempt_at: '2026-03-02T08:01:00.000Z',
  delivered_at: null,
  attempt_log: [],
};

export const WEBHOOK_EXAMPLES = {
  createWebhook: {
    request: {
      url: 'https://hooks.example.com/kb',
      events: ['document.version.completed', 'document.version.failed'],
      description: 'Re-index the chat bot',
    },
    responses: { '201': { ...ENDPOINT, secret: SECRET } },
  },
  listWebhooks: { responses: { '200': { webhooks: [ENDPOINT] } } },
  getWebhook: { responses: { '200': ENDPOINT } },
  updateWebhook: {
    request: { rotate_secret: true },
    responses: { '200': { ...ENDPOINT, updated_at: '2026-03-03T09:00:00.000Z', secret: SECRET } },
  },
  deleteWebhook: { responses: {} },
  testWebhook: { responses: { '202': PENDING_TEST } },
  listWebhookDeliveries: { responses: { '200': { deliveries: [SOURCE_DELIVERY, DELIVERY] } } },
  retryWebhookDelivery: {
    responses: { '202': { ...DELIVERY, status: 'pending', next_attempt_at: '2026-03-02T09:00:00.000Z' } },
  },
  streamEvents: {
    responses: {
      '200':
        'retry: 3000\n: connected\n\n' +
        'id: 1772438414100-0199f1c2-8b10-7e55-a1c3-4d6f2b9e0a17\nevent: document.version.completed\n' +
        'data: {"type":"document.version.completed","timestamp":"2026-03-02T08:00:14.098Z","data":{"workspace_id":"default","document_id":"0199f1c2-7a3e-7c41-9d2a-5b8e3f6a1d20","version":1,"status":"completed","name":"notes.md","source":"api"}}\n\n',
    },
  },
};
