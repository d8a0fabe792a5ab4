import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';

/** Requests found by fuzzing the OpenAPI document, each answered as documented (no 5xx, no 431). */
let svc: TestApp;

beforeAll(async () => {
  svc = await buildTestApp({ env: { KB_EMBEDDING_PROVIDER: 'local' } });
});
afterAll(async () => {
  await svc?.close();
});

describe('malformed requests', () => {
  it('a multipart body cut off inside its first part is a 400, not a server error', async () => {
    const boundary = '18c3ca79355c6bfc61a024f2327d2311';
    const res = await svc.request('POST', '/api/v1/documents', {
      body: `--${boundary}\r\n115714--${boundary}--\r\n`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/multipart body is malformed/);
  });

  it('a method no route takes is a 405 with Allow, even with a body and no content type', async () => {
    for (const path of ['/health', '/api/v1/documents/0199aaaa-0000-7000-8000-000000000000/versions']) {
      const res = await svc.request('QUERY', path, { body: 'x' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow')).toContain('GET');
    }
    expect((await svc.request('QUERY', '/nowhere')).status).toBe(404);
  });

  it('the longest query string the routes accept is validated, not refused for its size', async () => {
    const cursor = encodeURIComponent('\u{1F600}'.repeat(1024));
    const res = await svc.request('GET', `/api/v1/audit-logs?cursor=${cursor}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/cursor is not valid/);
  });

  it('search weights that are both 0 fail validation on the weights field', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      json: { query: 'anything', weights: { keyword: 0, semantic: 0 } },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'weights', message: 'keyword and semantic are both 0' }]);
  });

  it('a metadata part sent as application/json, as the OpenAPI encoding describes it, is the metadata', async () => {
    const boundary = 'kb-metadata-as-json';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n` +
      `{"team":"docs"}\r\n--${boundary}\r\n` +
      'Content-Disposition: form-data; name="file"; filename="notes.md"\r\nContent-Type: text/markdown\r\n\r\n' +
      `# Notes\n\nEncoded metadata.\n\r\n--${boundary}--\r\n`;
    const created = await svc.request('POST', '/api/v1/documents', {
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(created.status).toBe(201);
    const doc = await svc.request('GET', `/api/v1/documents/${created.body.document_id}`);
    expect(doc.body.metadata).toEqual({ team: 'docs' });
  });

  it('a change reason is at most 2000 characters as sent, blank padding included, in forms as in JSON', async () => {
    const padded = `${'\t'.repeat(2001)}why`;
    const form = new FormData();
    form.append('metadata', JSON.stringify({ change_reason: padded }));
    form.append('file', new Blob(['# Notes\n']), 'notes.md');
    const upload = await svc.request('POST', '/api/v1/documents', { body: form });
    expect(upload.status).toBe(422);
    expect(upload.body.errors).toEqual([
      { field: 'metadata.change_reason', message: 'must be at most 2000 characters' },
    ]);
  });

  it('a __proto__ key in a JSON body is refused with a detail that says so', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      body: '{"query":"x","filters":{"metadata":{"__proto__":{"admin":true}}}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('__proto__');
  });
});
