import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_KINDS } from '../../core/errors/error-catalogue.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { expectProblem } from '../support/test-service.ts';

let svc: TestApp;
let documentId: string;

beforeAll(async () => {
  svc = await buildTestApp();
  const res = await svc.upload('prefix.txt', 'Same document under both prefixes.', { metadata: { k: 'v' } });
  expect(res.status).toBe(201);
  documentId = res.body.document_id;
});
afterAll(async () => {
  await svc?.close();
});

describe('problem details', () => {
  it('describe an unknown route, with type under the service origin and trace_id = X-Request-Id', async () => {
    const res = await svc.request('GET', '/api/v1/nothing-here?x=1', { key: null });
    const problem = expectProblem(res, 404, 'not-found');
    expect(problem.type).toBe(`${svc.url}/errors/not-found`);
    expect(problem.instance).toBe('/api/v1/nothing-here');
    expect(problem.title).toBe('Not Found');
  });

  it('answer a known path with the wrong method as 405 with Allow', async () => {
    const search = await svc.request('GET', '/api/v1/search');
    expect(expectProblem(search, 405, 'method-not-allowed').detail).toContain('takes POST');
    expect(search.headers.get('allow')).toBe('POST');
    const doc = await svc.request('POST', `/v1/documents/${randomUUID()}`);
    expectProblem(doc, 405, 'method-not-allowed');
    expect(doc.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH, PUT');
    expect(doc.headers.get('x-request-id')).toBeTruthy();
  });

  it('describe an unknown document and an id that is not a UUID as 404', async () => {
    const unknown = await svc.request('GET', `/api/v1/documents/${randomUUID()}`);
    expectProblem(unknown, 404, 'not-found');
    const notUuid = await svc.request('GET', '/api/v1/documents/not-a-uuid');
    expect(expectProblem(notUuid, 404, 'not-found').instance).toBe('/api/v1/documents/not-a-uuid');
    const long = await svc.request('GET', `/api/v1/documents/${'a'.repeat(150)}`);
    expect(expectProblem(long, 404, 'not-found').detail).not.toContain('aaaa');
  });

  it('hide another workspace’s document behind 404', async () => {
    for (const path of [
      `/api/v1/documents/${documentId}`,
      `/api/v1/chunks/${documentId}`,
      `/api/v1/documents/${documentId}/versions`,
    ]) {
      expectProblem(await svc.request('GET', path, { key: svc.keys.otherWorkspace }), 404, 'not-found');
    }
    const del = await svc.request('DELETE', `/api/v1/documents/${documentId}`, { key: svc.keys.otherWorkspace });
    expectProblem(del, 404, 'not-found');
    expect((await svc.request('GET', `/api/v1/documents/${documentId}`)).status).toBe(200);
  });

  it('list each failed body field in a 422', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      json: {
        query: '',
        limit: 500,
        mode: 'fuzzy',
        as_of: 'last tuesday',
        filters: { metadata: { tag: { nested: true } }, colour: 'red' },
        extra: true,
      },
    });
    const problem = expectProblem(res, 422, 'validation-error');
    const fields = problem.errors?.map((e) => e.field) ?? [];
    for (const field of ['query', 'limit', 'mode', 'as_of', 'filters.metadata.tag', 'filters.colour', 'extra']) {
      expect(fields).toContain(field);
    }
    for (const e of problem.errors ?? []) expect(e.message).toEqual(expect.any(String));
  });

  it('answer 400 for a body that is not JSON at all', async () => {
    const malformed = await svc.request('POST', '/api/v1/search', {
      body: '{"query": "unterminated',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(malformed, 400, 'bad-request');
    const plain = await svc.request('POST', '/api/v1/search', {
      body: 'query=hello',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(plain, 400, 'bad-request');
    expectProblem(await svc.request('POST', '/api/v1/search'), 400, 'bad-request');
  });

  it('answer 422 for JSON that is not an object', async () => {
    const res = await svc.request('POST', '/api/v1/search', { json: ['query'] });
    expectProblem(res, 422, 'validation-error');
  });

  it('answer 413 for a JSON body over the limit', async () => {
    const res = await svc.request('POST', '/api/v1/search', { json: { query: 'x', pad: 'p'.repeat(2 * 1024 * 1024) } });
    expectProblem(res, 413, 'payload-too-large');
  });
});

describe('request ids', () => {
  it('are UUIDs, fresh per request, on every response', async () => {
    const a = await svc.request('GET', '/health', { key: null });
    const b = await svc.request('GET', '/api/v1/documents');
    const ids = [a.headers.get('x-request-id'), b.headers.get('x-request-id')];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('honour an incoming X-Request-Id only when it is a UUID', async () => {
    const mine = randomUUID();
    const kept = await svc.request('GET', '/api/v1/documents/not-a-uuid', { headers: { 'x-request-id': mine } });
    expect(kept.headers.get('x-request-id')).toBe(mine);
    expect(expectProblem(kept, 404, 'not-found').trace_id).toBe(mine);

    const replaced = await svc.request('GET', '/health', { key: null, headers: { 'x-request-id': 'abc; drop table' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('abc; drop table');
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('both prefixes', () => {
  const strip = (body: Record<string, unknown>) => {
    const { trace_id: _t, timestamp: _ts, instance: _i, ...rest } = body;
    return rest;
  };

  it('answer identically under /api/v1 and /v1', async () => {
    for (const path of [
      `/documents/${documentId}`,
      '/documents',
      '/documents?page=1&page_size=5',
      `/documents/${documentId}/versions`,
      `/documents/${documentId}/versions/1`,
      '/audit-logs',
    ]) {
      const a = await svc.request('GET', `/api/v1${path}`);
      const b = await svc.request('GET', `/v1${path}`);
      expect(a.status, path).toBe(200);
      expect(b.status, path).toBe(a.status);
      expect(b.body, path).toEqual(a.body);
    }
  });

  it('fail identically under /api/v1 and /v1', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['GET', `/documents/${randomUUID()}`, {}],
      ['GET', '/documents?limit=0', {}],
      ['POST', '/search', { json: { query: '' } }],
      ['GET', '/documents', { key: null }],
      ['POST', '/search', { key: svc.keys.read, json: { query: 'x' } }],
    ];
    for (const [method, path, options] of cases) {
      const a = await svc.request(method, `/api/v1${path}`, options);
      const b = await svc.request(method, `/v1${path}`, options);
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(b.status, path).toBe(a.status);
      expect(strip(b.body), path).toEqual(strip(a.body));
      expect(b.body.instance).toBe(`/v1${path.split('?')[0]}`);
    }
  });

  it('upload under /v1 too', async () => {
    const form = new FormData();
    form.append('file', new Blob(['Uploaded through the short prefix.'], { type: 'text/plain' }), 'short.txt');
    const res = await svc.request('POST', '/v1/documents', { body: form });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'short.txt', status: 'pending', version: 1 });
  });
});

describe('health', () => {
  it('/health and /health/live answer the same liveness body', async () => {
    const a = await svc.request('GET', '/health', { key: null });
    const b = await svc.request('GET', '/health/live', { key: null });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ status: 'healthy', service: 'kb-document-service' });
    expect(b.body).toEqual(a.body);
  });

  it('/health/ready reports the database and the vector store', async () => {
    const res = await svc.request('GET', '/health/ready', { key: null });
    expect(res.status).toBe(200);
    expect(['healthy', 'degraded']).toContain(res.body.status);
    expect(res.body.service).toBe('kb-document-service');
    expect(res.body.version).toEqual(expect.any(String));
    for (const check of ['database', 'vector_store']) {
      expect(res.body.checks[check]).toMatchObject({ status: expect.any(String), message: expect.any(String) });
    }
  });
});

describe('error pages and the OpenAPI document', () => {
  it('serve a page for every problem kind and 404 for others', async () => {
    for (const kind of PROBLEM_KINDS) {
      const res = await svc.request('GET', `/errors/${kind}`, { key: null });
      expect(res.status, kind).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.text).toContain(kind);
    }
    const page = await svc.request('GET', '/errors/not-found', { key: null });
    expect(page.text).toContain('404');
    expectProblem(await svc.request('GET', '/errors/teapot', { key: null }), 404, 'not-found');
  });

  it('serve OpenAPI 3.1 with every /api/v1 path, its /v1 alias and the security schemes', async () => {
    const res = await svc.request('GET', '/openapi.json', { key: null });
    expect(res.status).toBe(200);
    const spec = res.body;
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.version).toBe(svc.runtime.version);
    const paths = Object.keys(spec.paths);
    for (const path of [
      '/api/v1/documents',
      '/api/v1/documents/{id}',
      '/api/v1/documents/{id}/reprocess',
      '/api/v1/documents/{id}/versions',
      '/api/v1/documents/{id}/versions/compare',
      '/api/v1/documents/{id}/versions/{version}',
      '/api/v1/documents/{id}/rollback',
      '/api/v1/chunks/{document_id}',
      '/api/v1/chunks/{document_id}/context',
      '/api/v1/search',
      '/api/v1/audit-logs',
      '/health',
      '/health/live',
      '/health/ready',
    ]) {
      expect(paths).toContain(path);
    }
    expect(paths.filter((p) => p.startsWith('/v1/')).length).toBe(paths.filter((p) => p.startsWith('/api/v1/')).length);
    expect(Object.keys(spec.paths['/api/v1/documents/{id}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    expect(spec.components.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(spec.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(spec.paths['/health'].get.security).toEqual([]);
    expect(spec.tags.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['documents', 'versions', 'chunks', 'search', 'audit', 'health']),
    );
    const upload = spec.paths['/api/v1/documents'].post;
    expect(upload.requestBody.content['multipart/form-data'].schema).toEqual({
      $ref: '#/components/schemas/UploadForm',
    });
    expect(spec.components.schemas.UploadForm.properties.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(upload.responses['413']).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
    const search = spec.paths['/api/v1/search'].post;
    expect(search.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/SearchRequest',
    });
    expect(spec.components.schemas.SearchRequest.required).toEqual(['query']);
  });
});
