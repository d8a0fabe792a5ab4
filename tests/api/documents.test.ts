import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunksView } from '../../core/model/response-views.model.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { type ApiResponse, expectProblem, sectionedDocument } from '../support/test-service.ts';

let svc: TestApp;
const SHORT = 'The zephyrine albatross glides over the Kerguelen plateau for weeks without landing.';
let shortId: string;
let longId: string;

beforeAll(async () => {
  svc = await buildTestApp({ stages: 'all' });
  const short = await svc.upload('albatross.txt', SHORT, {
    metadata: { title: 'Albatross', category: 'alpha', change_reason: 'initial import' },
  });
  expect(short.status).toBe(201);
  shortId = short.body.document_id;
  const long = await svc.upload('biomes.md', sectionedDocument(), {
    metadata: { title: 'Biomes' },
    type: 'text/markdown',
  });
  expect(long.status).toBe(201);
  longId = long.body.document_id;
  await svc.waitForStatus(shortId, 'completed');
  await svc.waitForStatus(longId, 'completed');
});
afterAll(async () => {
  await svc?.close();
});

describe('upload, ingestion, get and search', () => {
  it('answers the upload with 201 and the document fields, status pending', async () => {
    const content = 'A brand new note about the Weddell Sea.';
    const res = await svc.upload('weddell.txt', content, { metadata: { title: 'Weddell' }, source: 'crm' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      document_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'weddell.txt',
      workspace_id: svc.workspaceId,
      storage_url: expect.any(String),
      mime_type: 'text/plain',
      size_bytes: Buffer.byteLength(content),
      status: 'pending',
      message: expect.any(String),
    });
    const done = await svc.waitForStatus(res.body.document_id, 'completed');
    expect(done.source).toBe('crm');
  });

  it('serves the completed document with its details, change_reason kept out of metadata', async () => {
    const res = await svc.request('GET', `/api/v1/documents/${shortId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: shortId,
      document_id: shortId,
      status: 'completed',
      version: 1,
      metadata: { title: 'Albatross', category: 'alpha' },
      name: 'albatross.txt',
      workspace_id: svc.workspaceId,
      mime_type: 'text/plain',
      size_bytes: Buffer.byteLength(SHORT),
      content_hash: createHash('sha256').update(SHORT).digest('hex'),
      source: 'upload',
      error: null,
    });
    expect(res.body.metadata).not.toHaveProperty('change_reason');
    expect(res.body.stats.chunks).toBeGreaterThanOrEqual(1);
    expect(res.body.stats.tokens).toBeGreaterThan(0);
  });

  it('finds the document by search in every mode', async () => {
    for (const mode of ['hybrid', 'semantic', 'keyword', undefined]) {
      const res = await svc.request('POST', '/api/v1/search', {
        json: { query: 'zephyrine albatross Kerguelen', ...(mode ? { mode } : {}) },
      });
      expect(res.status, String(mode)).toBe(200);
      expect(res.body).toMatchObject({ query: 'zephyrine albatross Kerguelen', mode: mode ?? 'hybrid', as_of: null });
      expect(res.body.took_ms).toEqual(expect.any(Number));
      const hit = res.body.results.find((r: { document_id: string }) => r.document_id === shortId);
      expect(hit, String(mode)).toMatchObject({
        chunk_id: `${shortId}:1:0`,
        document_name: 'albatross.txt',
        version: 1,
        index: 0,
        content: SHORT,
        metadata: { title: 'Albatross', category: 'alpha' },
        page: null,
      });
      expect(hit.score).toEqual(expect.any(Number));
      expect(Array.isArray(hit.highlights)).toBe(true);
    }
  });

  it('applies search filters, with a scalar metadata value meaning one allowed value', async () => {
    const search = async (filters: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const res = await svc.request('POST', '/api/v1/search', {
        json: { query: 'zephyrine albatross', mode: 'keyword', filters, ...extra },
      });
      expect(res.status).toBe(200);
      return res.body.results.map((r: { document_id: string }) => r.document_id) as string[];
    };
    expect(await search({ metadata: { category: 'alpha' } })).toContain(shortId);
    expect(await search({ metadata: { category: 'beta' } })).not.toContain(shortId);
    expect(await search({ metadata: { category: ['beta', 'alpha'] } })).toContain(shortId);
    expect(await search({ document_ids: [longId] })).not.toContain(shortId);
    expect(await search({ document_ids: [shortId] })).toContain(shortId);
    expect(await search({ mime_types: ['application/pdf'] })).not.toContain(shortId);
    expect(await search({ mime_types: ['text/plain'] })).toContain(shortId);
    expect(await search({ created_after: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await search({}, { limit: 1 })).toHaveLength(1);
  });

  it('searches as of a past instant', async () => {
    const before = await svc.request('POST', '/api/v1/search', {
      json: { query: 'zephyrine albatross', as_of: '2001-01-01T00:00:00Z' },
    });
    expect(before.status).toBe(200);
    expect(before.body.results).toEqual([]);
    expect(Date.parse(before.body.as_of)).toBe(Date.parse('2001-01-01T00:00:00Z'));
    const now = await svc.request('POST', '/api/v1/search', {
      json: { query: 'zephyrine albatross', as_of: new Date().toISOString() },
    });
    expect(now.body.results.map((r: { document_id: string }) => r.document_id)).toContain(shortId);
  });

  it('never shows one workspace’s documents to another', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      key: svc.keys.otherWorkspace,
      json: { query: 'zephyrine albatross Kerguelen' },
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expectProblem(
      await svc.request('GET', `/api/v1/documents/${shortId}`, { key: svc.keys.otherWorkspace }),
      404,
      'not-found',
    );
  });

  it('rejects bad search bodies with 422', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'query'],
      [{ query: '' }, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: 'q'.repeat(2001) }, 'query'],
      [{ query: 'ok', limit: 0 }, 'limit'],
      [{ query: 'ok', limit: 101 }, 'limit'],
      [{ query: 'ok', limit: '10' }, 'limit'],
      [{ query: 'ok', mode: 'fuzzy' }, 'mode'],
      [{ query: 'ok', as_of: 'yesterday' }, 'as_of'],
      [{ query: 'ok', min_score: 'high' }, 'min_score'],
      [{ query: 'ok', filters: { document_ids: 'one' } }, 'filters.document_ids'],
      [{ query: 'ok', filters: { created_before: '2024-13-45' } }, 'filters.created_before'],
      [
        {
          query: 'ok',
          filters: { metadata: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])) },
        },
        'filters.metadata',
      ],
    ];
    for (const [json, field] of cases) {
      const res = await svc.request('POST', '/api/v1/search', { json });
      const problem = expectProblem(res, 422, 'validation-error');
      expect(
        problem.errors?.map((e) => e.field),
        JSON.stringify(json).slice(0, 80),
      ).toContain(field);
    }
    const atLimit = await svc.request('POST', '/api/v1/search', { json: { query: 'q'.repeat(2000) } });
    expect(atLimit.status).toBe(200);
  });

  it('says that as_of needs a time zone', async () => {
    const res = await svc.request('POST', '/api/v1/search', { json: { query: 'ok', as_of: '2024-01-01T00:00:00' } });
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.errors).toEqual([{ field: 'as_of', message: expect.stringContaining('with a time zone') }]);
  });
});

describe('chunks and context', () => {
  it('lists the chunks of the current version', async () => {
    const res = await svc.request('GET', `/api/v1/chunks/${longId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ document_id: longId, version: 1 });
    const chunks = res.body.chunks as Array<Record<string, unknown>>;
    expect(chunks.length).toBeGreaterThan(2);
    chunks.forEach((c, i) => {
      expect(c).toMatchObject({
        id: `${longId}:1:${i}`,
        index: i,
        content: expect.any(String),
        tokens: expect.any(Number),
        start_offset: expect.any(Number),
        end_offset: expect.any(Number),
        page: null,
        metadata: expect.any(Object),
      });
    });
    expect(res.body.pagination).toMatchObject({ has_more: false, total: chunks.length });
    const doc = await svc.request('GET', `/api/v1/documents/${longId}`);
    expect(doc.body.stats.chunks).toBe(chunks.length);
  });

  it('pages chunks with limit and cursor, and selects a version', async () => {
    const all = (await svc.request('GET', `/api/v1/chunks/${longId}`)).body.chunks.map((c: { id: string }) => c.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse<ChunksView> = await svc.request(
        'GET',
        `/api/v1/chunks/${longId}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.chunks.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.chunks.map((c: { id: string }) => c.id));
      cursor = res.body.pagination.has_more ? res.body.pagination.next_cursor : null;
    } while (cursor);
    expect(seen).toEqual(all);

    const v1 = await svc.request('GET', `/api/v1/chunks/${longId}?version=1`);
    expect(v1.body.chunks.map((c: { id: string }) => c.id)).toEqual(all);
    expectProblem(await svc.request('GET', `/api/v1/chunks/${longId}?version=7`), 404, 'not-found');
  });

  it('rejects bad chunk queries with 400 and unknown documents with 404', async () => {
    for (const q of ['limit=0', 'limit=1001', 'version=0', 'version=abc', 'limit=1.5']) {
      expectProblem(await svc.request('GET', `/api/v1/chunks/${longId}?${q}`), 400, 'bad-request');
    }
    expectProblem(await svc.request('GET', `/api/v1/chunks/${randomUUID()}`), 404, 'not-found');
    expectProblem(await svc.request('GET', '/api/v1/chunks/12345'), 404, 'not-found');
  });

  it('returns the full extracted text as context', async () => {
    const res = await svc.request('GET', `/api/v1/chunks/${longId}/context`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ document_id: longId, version: 1, tokens: expect.any(Number) });
    expect(res.body.content).toContain('researchers studying glaciers');
    expect(res.body.content).toContain('researchers studying savannas');
    const chunks = (await svc.request('GET', `/api/v1/chunks/${longId}`)).body.chunks;
    expect(res.body.chunk_count).toBe(chunks.length);
  });

  it('ingests UTF-16 text with a byte order mark as text', async () => {
    const bytes = Buffer.from('\ufeffDie Flüsse Sibiriens frieren im Oktober zu.\r\n', 'utf16le');
    const res = await svc.upload('siberia.txt', new Uint8Array(bytes), { type: 'text/plain; charset=utf-16' });
    expect(res.status).toBe(201);
    expect(res.body.mime_type).toBe('text/plain');
    await svc.waitForStatus(res.body.document_id, 'completed');
    const context = await svc.request('GET', `/api/v1/chunks/${res.body.document_id}/context`);
    expect(context.body.content).toBe('Die Flüsse Sibiriens frieren im Oktober zu.');
  });

  it('returns a chunk with its neighbours for chunk_id and window', async () => {
    const chunks = (await svc.request('GET', `/api/v1/chunks/${longId}`)).body.chunks as Array<{
      id: string;
      index: number;
    }>;
    const middle = chunks[Math.floor(chunks.length / 2)]!;
    const one = await svc.request(
      'GET',
      `/api/v1/chunks/${longId}/context?chunk_id=${encodeURIComponent(middle.id)}&window=1`,
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ document_id: longId, version: 1, chunk_id: middle.id, window: 1 });
    expect(one.body.chunks.map((c: { index: number }) => c.index)).toEqual([
      middle.index - 1,
      middle.index,
      middle.index + 1,
    ]);
    const dflt = await svc.request(
      'GET',
      `/api/v1/chunks/${longId}/context?chunk_id=${encodeURIComponent(chunks[0]!.id)}`,
    );
    expect(dflt.body.window).toBe(2);
    expect(dflt.body.chunks.map((c: { index: number }) => c.index)).toEqual([0, 1, 2]);
    for (const q of ['window=21', 'window=-1', 'window=x', 'version=0']) {
      expectProblem(
        await svc.request('GET', `/api/v1/chunks/${longId}/context?chunk_id=${encodeURIComponent(middle.id)}&${q}`),
        400,
        'bad-request',
      );
    }
    expectProblem(
      await svc.request('GET', `/api/v1/chunks/${longId}/context?chunk_id=${encodeURIComponent(`${longId}:1:999`)}`),
      404,
      'not-found',
    );
  });
});

describe('delete and purge', () => {
  it('deletes with 204: the document leaves get, list and search at once', async () => {
    const up = await svc.upload('doomed.txt', 'The quetzalcoatlus pterosaur had an enormous wingspan.');
    const id = up.body.document_id;
    await svc.waitForStatus(id, 'completed');
    const found = await svc.request('POST', '/api/v1/search', { json: { query: 'quetzalcoatlus pterosaur' } });
    expect(found.body.results.map((r: { document_id: string }) => r.document_id)).toContain(id);

    const del = await svc.request('DELETE', `/api/v1/documents/${id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');

    expectProblem(await svc.request('GET', `/api/v1/documents/${id}`), 404, 'not-found');
    const list = await svc.request('GET', '/api/v1/documents?limit=100');
    expect(list.body.documents.map((d: { id: string }) => d.id)).not.toContain(id);
    const gone = await svc.request('POST', '/api/v1/search', { json: { query: 'quetzalcoatlus pterosaur' } });
    expect(gone.body.results.map((r: { document_id: string }) => r.document_id)).not.toContain(id);
    expectProblem(await svc.request('DELETE', `/api/v1/documents/${id}`), 404, 'not-found');

    const audit = await svc.request('GET', `/api/v1/audit-logs?document_id=${id}&action=delete`);
    expect(audit.body.entries).toHaveLength(1);
  });

  it('purges every stored file of the document with ?purge=true', async () => {
    const up = await svc.upload('purged.txt', 'The purge test document mentions the word xylophone.');
    const id = up.body.document_id;
    await svc.waitForStatus(id, 'completed');
    expect((await svc.storedObjects()).some((f) => f.includes(id))).toBe(true);

    expectProblem(await svc.request('DELETE', `/api/v1/documents/${id}?purge=maybe`), 400, 'bad-request');
    const del = await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`);
    expect(del.status).toBe(204);
    expect((await svc.storedObjects()).filter((f) => f.includes(id))).toEqual([]);
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions`), 404, 'not-found');
    const audit = await svc.request('GET', `/api/v1/audit-logs?document_id=${id}&action=purge`);
    expect(audit.body.entries).toHaveLength(1);
  });

  it('answers 404 for unknown and malformed ids', async () => {
    expectProblem(await svc.request('DELETE', `/api/v1/documents/${randomUUID()}`), 404, 'not-found');
    expectProblem(await svc.request('DELETE', '/api/v1/documents/nope'), 404, 'not-found');
  });
});

describe('reprocess', () => {
  it('re-queues the latest version with 202 and completes again', async () => {
    const res = await svc.request('POST', `/api/v1/documents/${shortId}/reprocess`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: shortId, version: 1 });
    await svc.waitForStatus(shortId, 'completed');
    expectProblem(await svc.request('POST', `/api/v1/documents/${randomUUID()}/reprocess`), 404, 'not-found');
  });
});
