/**
 * Wiring of the HTTP layer itself, with a small in-test `Services` whose answers each test picks:
 * what no real runtime produces on demand (crashes, an unhealthy dependency) and options of the
 * app (`KB_PROBLEM_BASE_URL`). Everything else is tested against the real runtime.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../apps/api/app.ts';
import { startServer } from '../../apps/api/server.ts';
import { configFrom } from '../../core/config/config.ts';
import { KbError } from '../../core/errors/kb-error.ts';
import type { ApiKeyRecord } from '../../core/model/account-records.model.ts';
import type { CheckStatus, ReadinessView } from '../../core/model/response-views.model.ts';
import type { Services } from '../../core/services/services.ts';

const KEY = 'ink_wiringtestkeywiringtestkeywiringtest00';
const record: ApiKeyRecord = {
  id: 'key-1',
  name: 'wiring',
  prefix: KEY.slice(0, 12),
  hash: 'unused',
  workspaceId: 'ws',
  permissions: ['read', 'search', 'write'],
  plan: 'enterprise',
  createdAt: new Date().toISOString(),
  revokedAt: null,
  lastUsedAt: null,
};

const unexpected = (): never => {
  throw new Error('not used by this test');
};

function fakeServices(behaviour: { ready?: () => Promise<ReadinessView>; get?: () => Promise<never> }): Services {
  return {
    uploads: { stage: unexpected, discard: unexpected },
    documents: {
      get: behaviour.get ?? unexpected,
      list: unexpected,
      lookup: unexpected,
      listChangeMark: unexpected,
      names: unexpected,
    },
    documentWrites: {
      create: unexpected,
      replaceContent: unexpected,
      patchMetadata: unexpected,
      remove: unexpected,
      reprocess: unexpected,
    },
    sources: {
      create: unexpected,
      list: unexpected,
      get: unexpected,
      update: unexpected,
      remove: unexpected,
      sync: unexpected,
      runs: unexpected,
      run: unexpected,
      itemKeysOf: unexpected,
    },
    versions: { history: unexpected, version: unexpected, compare: unexpected, rollback: unexpected },
    chunks: { chunks: unexpected, context: unexpected },
    search: { search: unexpected },
    audit: { list: unexpected },
    accounts: {
      create: unexpected,
      list: unexpected,
      signIn: unexpected,
      authenticate: unexpected,
      signOut: unexpected,
      changePassword: unexpected,
      resetPassword: unexpected,
      count: unexpected,
    },
    events: { open: unexpected, heartbeatMs: 1000, close: async () => {} },
    webhooks: {
      eventTypes: [],
      create: unexpected,
      list: unexpected,
      get: unexpected,
      update: unexpected,
      remove: unexpected,
      sendTest: unexpected,
      deliveries: unexpected,
      retry: unexpected,
    },
    usage: { lastHour: unexpected },
    pipeline: { overview: unexpected },
    deadLetters: { list: unexpected, replay: unexpected, counts: unexpected, peekCounts: () => null },
    keys: {
      create: unexpected,
      list: unexpected,
      revoke: unexpected,
      count: unexpected,
      activeKey: unexpected,
      authenticate: async (presented) => (presented === KEY ? record : null),
    },
    rateLimiter: {
      hit: () => ({
        allowed: true,
        limit: 10000,
        remaining: 9999,
        reset: Math.ceil(Date.now() / 1000) + 60,
        retryAfter: 0,
      }),
      close: async () => {},
    },
    health: { ready: behaviour.ready ?? unexpected },
    reindex: { indexModel: unexpected, run: unexpected },
    retention: { run: unexpected },
    idempotency: { parseKey: unexpected, begin: unexpected, sweep: unexpected },
    backlog: { admit: unexpected, noteQueued: unexpected, view: unexpected },
    tokens: { mint: unexpected, verify: async () => null, maxTtlSeconds: 3600 },
  };
}

const readiness = (status: CheckStatus): ReadinessView => ({
  status,
  timestamp: new Date().toISOString(),
  version: '9.9.9',
  service: 'kb-document-service',
  checks: {
    database: { status, latency_ms: status === 'unhealthy' ? null : 3.5, message: 'SQLite' },
    vector_store: { status: 'healthy', latency_ms: 1.25, message: 'SQLite-vec' },
  },
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(services: Services, env: Parameters<typeof configFrom>[0] = {}) {
  app = await buildApp({ config: configFrom(env), services, version: '9.9.9' });
  return app;
}

const docUrl = () => `/api/v1/documents/${randomUUID()}`;

describe('errors the real runtime cannot be made to throw', () => {
  it('an unexpected exception is a 500 problem that leaks nothing', async () => {
    const a = await build(
      fakeServices({
        get: async () => {
          throw new Error('connect ECONNREFUSED password=hunter2 at /srv/secret/db.sqlite');
        },
      }),
    );
    const res = await a.inject({ url: docUrl(), headers: { 'x-api-key': KEY } });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const body = res.json();
    expect(body).toMatchObject({ status: 500, title: 'Internal Server Error', trace_id: res.headers['x-request-id'] });
    expect(body.type).toMatch(/\/errors\/internal-error$/);
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('ECONNREFUSED');
    expect(res.body).not.toContain('/srv/secret');
  });

  it('an engine outage is a 503 problem without the engine’s message', async () => {
    const a = await build(
      fakeServices({
        get: async () => {
          throw new KbError('engine-unavailable', 'opensearch at 10.0.0.7:9200 refused the connection');
        },
      }),
    );
    const res = await a.inject({ url: docUrl(), headers: { 'x-api-key': KEY } });
    expect(res.statusCode).toBe(503);
    expect(res.json().type).toMatch(/\/errors\/service-unavailable$/);
    expect(res.body).not.toContain('10.0.0.7');
  });
});

describe('readiness status codes', () => {
  it.each([
    ['healthy', 200],
    ['degraded', 200],
    ['unhealthy', 503],
  ] as const)('%s → %i with the readiness body', async (status, code) => {
    const view = readiness(status);
    const a = await build(fakeServices({ ready: async () => view }));
    const res = await a.inject({ url: '/health/ready' });
    expect(res.statusCode).toBe(code);
    expect(res.json()).toEqual(view);
  });

  it('a readiness check that throws is a 503 problem', async () => {
    const a = await build(
      fakeServices({
        ready: async () => {
          throw new Error('boom');
        },
      }),
    );
    const res = await a.inject({ url: '/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body).not.toContain('boom');
  });
});

describe('application options', () => {
  it('uses KB_PROBLEM_BASE_URL as the base of problem types', async () => {
    const a = await build(fakeServices({}), { KB_PROBLEM_BASE_URL: 'https://docs.example.com/kb/' });
    const res = await a.inject({ url: '/nowhere' });
    expect(res.json().type).toBe('https://docs.example.com/kb/errors/not-found');
  });

  it('answers a malformed URL with a 400 problem carrying the request id', async () => {
    const a = await build(fakeServices({}));
    const res = await a.inject({ url: '/api/v1/documents/%E0%A4%A', headers: { 'x-api-key': KEY } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().trace_id).toBe(res.headers['x-request-id']);
  });

  it('startServer listens on the configured host and reports its URL', async () => {
    const server = await startServer({
      config: configFrom({ HOST: '127.0.0.1', PORT: '0' }),
      services: fakeServices({}),
      version: '9.9.9',
      logger: false,
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/health/live`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'healthy', service: 'kb-document-service' });
    } finally {
      await server.close();
    }
  });
});
