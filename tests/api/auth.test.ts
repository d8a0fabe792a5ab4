import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { type ApiResponse, expectProblem } from '../support/test-service.ts';

let svc: TestApp;

beforeAll(async () => {
  svc = await buildTestApp();
});
afterAll(async () => {
  await svc?.close();
});

function expectRateHeaders(res: ApiResponse, limit: number): number {
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  const remaining = Number(res.headers.get('x-ratelimit-remaining'));
  expect(Number.isInteger(remaining)).toBe(true);
  expect(remaining).toBeGreaterThanOrEqual(0);
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  // Unix seconds, within the next minute.
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThanOrEqual(Math.floor(now) - 1);
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 61);
  return remaining;
}

describe('authentication', () => {
  it('answers 401 with the alternative error member when no key is sent', async () => {
    const res = await svc.request('GET', '/api/v1/documents', { key: null });
    const problem = expectProblem(res, 401, 'unauthorized');
    expect(problem.error).toEqual({ code: 'unauthorized', message: problem.detail });
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('answers 401 for an unknown key and for a malformed one', async () => {
    const unknown = `ink_${'A'.repeat(40)}`;
    expectProblem(await svc.request('GET', '/api/v1/documents', { key: unknown }), 401, 'unauthorized');
    expectProblem(await svc.request('GET', '/api/v1/documents', { key: 'not-a-key' }), 401, 'unauthorized');
    expectProblem(await svc.request('GET', '/api/v1/documents', { key: '' }), 401, 'unauthorized');
  });

  it('accepts the key as a bearer token', async () => {
    const res = await svc.request('GET', '/api/v1/documents', {
      key: null,
      headers: { authorization: `Bearer ${svc.keys.read}` },
    });
    expect(res.status).toBe(200);
  });

  it('rejects a non-bearer Authorization header', async () => {
    const res = await svc.request('GET', '/api/v1/documents', {
      key: null,
      headers: { authorization: `Basic ${Buffer.from(`x:${svc.keys.read}`).toString('base64')}` },
    });
    expectProblem(res, 401, 'unauthorized');
  });

  it('considers only X-API-Key when both headers are present', async () => {
    const wrongApiKey = await svc.request('GET', '/api/v1/documents', {
      key: `ink_${'B'.repeat(40)}`,
      headers: { authorization: `Bearer ${svc.keys.all}` },
    });
    expectProblem(wrongApiKey, 401, 'unauthorized');

    const wrongBearer = await svc.request('GET', '/api/v1/documents', {
      key: svc.keys.read,
      headers: { authorization: 'Bearer ink_nonsense' },
    });
    expect(wrongBearer.status).toBe(200);
  });

  it('rejects a revoked key', async () => {
    const { key, id } = await svc.createKey({ permissions: ['read'] });
    expect((await svc.request('GET', '/api/v1/documents', { key })).status).toBe(200);
    expect(await svc.runtime.services.keys.revoke(id)).toBe(true);
    const res = await svc.request('GET', '/api/v1/documents', { key });
    expectProblem(res, 401, 'unauthorized');
  });

  it('needs no key for health, the OpenAPI document and the error pages', async () => {
    for (const path of ['/health', '/health/live', '/health/ready', '/openapi.json', '/errors/forbidden']) {
      const res = await svc.request('GET', path, { key: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-ratelimit-limit'), path).toBeNull();
    }
  });
});

describe('permissions', () => {
  it('a read-only key cannot search or upload (403 with the alternative error member)', async () => {
    const search = await svc.request('POST', '/api/v1/search', { key: svc.keys.read, json: { query: 'anything' } });
    const problem = expectProblem(search, 403, 'forbidden');
    expect(problem.error?.code).toBe('forbidden');
    expect(problem.detail).toContain('search');

    const upload = await svc.upload('a.txt', 'text', { key: svc.keys.read });
    expect(expectProblem(upload, 403, 'forbidden').detail).toContain('write');
  });

  it('a read-only key cannot change or delete documents', async () => {
    const id = '01900000-0000-7000-8000-000000000000';
    const key = svc.keys.read;
    expectProblem(await svc.request('DELETE', `/api/v1/documents/${id}`, { key }), 403, 'forbidden');
    expectProblem(
      await svc.request('PATCH', `/api/v1/documents/${id}`, { key, json: { metadata: {} } }),
      403,
      'forbidden',
    );
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${id}/rollback`, { key, json: { target_version: 1 } }),
      403,
      'forbidden',
    );
    expectProblem(await svc.request('POST', `/api/v1/documents/${id}/reprocess`, { key }), 403, 'forbidden');
  });

  it('a search-only key cannot list documents, read chunks or the audit log', async () => {
    const key = svc.keys.search;
    expectProblem(await svc.request('GET', '/api/v1/documents', { key }), 403, 'forbidden');
    expectProblem(
      await svc.request('GET', '/api/v1/chunks/01900000-0000-7000-8000-000000000000', { key }),
      403,
      'forbidden',
    );
    expectProblem(await svc.request('GET', '/api/v1/audit-logs', { key }), 403, 'forbidden');
    const search = await svc.request('POST', '/api/v1/search', { key, json: { query: 'hello' } });
    expect(search.status).toBe(200);
  });

  it('a write-only key can upload but not read', async () => {
    const upload = await svc.upload('w.txt', 'written by the write key', { key: svc.keys.write });
    expect(upload.status).toBe(201);
    const get = await svc.request('GET', `/api/v1/documents/${upload.body.document_id}`, { key: svc.keys.write });
    expectProblem(get, 403, 'forbidden');
  });

  it('checks the key before reading the body: an unauthenticated upload is 401', async () => {
    const res = await svc.request('POST', '/api/v1/documents', { key: null, body: new FormData() });
    expectProblem(res, 401, 'unauthorized');
  });
});

describe('rate limiting', () => {
  it('puts rate-limit headers on every authenticated response, errors included', async () => {
    const { key } = await svc.createKey({ permissions: ['read', 'search'], plan: 'pro' });
    const responses = [
      await svc.request('GET', '/api/v1/documents', { key }),
      await svc.request('GET', '/api/v1/documents?limit=0', { key }),
      await svc.request('GET', '/api/v1/documents/01900000-0000-7000-8000-000000000000', { key }),
      await svc.request('POST', '/api/v1/search', { key, json: { query: '' } }),
      await svc.upload('x.txt', 'x', { key }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 404, 422, 403]);
    const remaining = responses.map((r) => expectRateHeaders(r, 500));
    expect(remaining).toEqual([499, 498, 497, 496, 495]);
  });

  it('answers 429 with Retry-After after the starter plan’s 100 requests a minute', async () => {
    const { key } = await svc.createKey({ permissions: ['read'], plan: 'starter' });
    const remaining: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await svc.request('GET', '/api/v1/documents?limit=1', { key });
      expect(res.status).toBe(200);
      remaining.push(expectRateHeaders(res, 100));
    }
    expect(remaining[0]).toBe(99);
    expect(remaining[99]).toBe(0);

    const limited = await svc.request('GET', '/api/v1/documents?limit=1', { key });
    const problem = expectProblem(limited, 429, 'rate-limit-exceeded');
    expectRateHeaders(limited, 100);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(problem.error).toEqual({ code: 'rate_limit_exceeded', message: problem.detail, retry_after: retryAfter });

    // Another key of the same workspace is not affected.
    expect((await svc.request('GET', '/api/v1/documents?limit=1', { key: svc.keys.read })).status).toBe(200);
  });
});
