import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntryView } from '../../core/model/response-views.model.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { type ApiResponse, expectProblem, sectionedDocument } from '../support/test-service.ts';

/**
 * One document through its life: upload (v1) → PUT new content (v2) → PATCH metadata (v3) →
 * rollback to v1 (v4). The describes run in order and build on each other.
 */
let svc: TestApp;
let id: string;
let writer: { key: string; id: string };
const V1 = sectionedDocument();
const V2 = sectionedDocument({
  3: 'This section was rewritten entirely: the desert chapter now describes dune migration measured by satellites over a decade.',
});
let patchTraceId: string;

beforeAll(async () => {
  svc = await buildTestApp({ stages: 'all' });
  writer = await svc.createKey({ permissions: ['read', 'search', 'write'] });
  const up = await svc.upload('biomes.md', V1, {
    metadata: { title: 'Biomes', edition: 1 },
    type: 'text/markdown',
    key: writer.key,
  });
  expect(up.status).toBe(201);
  id = up.body.document_id;
  await svc.waitForStatus(id, 'completed');
});
afterAll(async () => {
  await svc?.close();
});

describe('PUT /documents/:id (new content)', () => {
  it('rejects bad input and leaves the document at version 1', async () => {
    const objectsBefore = await svc.storedObjects();
    const badMetadata = await svc.upload('biomes.md', V2, { documentId: id, metadata: '[1]' });
    expectProblem(badMetadata, 422, 'validation-error');
    const empty = await svc.upload('biomes.md', '', { documentId: id });
    expectProblem(empty, 400, 'bad-request');
    const noFile = new FormData();
    noFile.append('change_reason', 'nothing');
    expectProblem(await svc.request('PUT', `/api/v1/documents/${id}`, { body: noFile }), 400, 'bad-request');
    expectProblem(await svc.request('PUT', `/api/v1/documents/${id}`, { json: { metadata: {} } }), 400, 'bad-request');
    const source = await svc.upload('biomes.md', V2, { documentId: id, source: 'crm' });
    expect(expectProblem(source, 422, 'validation-error').errors?.[0]?.field).toBe('source');

    expect(await svc.storedObjects()).toEqual(objectsBefore);
    const doc = await svc.request('GET', `/api/v1/documents/${id}`);
    expect(doc.body.version).toBe(1);
  });

  it('answers 404 for an unknown or malformed document', async () => {
    expectProblem(await svc.upload('x.md', 'text', { documentId: randomUUID() }), 404, 'not-found');
    expectProblem(await svc.upload('x.md', 'text', { documentId: 'abc' }), 404, 'not-found');
    expectProblem(await svc.upload('x.md', 'text', { documentId: id, key: svc.keys.otherWorkspace }), 404, 'not-found');
  });

  it('creates version 2 with the new content and the change reason', async () => {
    const res = await svc.upload('biomes-v2.md', V2, {
      documentId: id,
      changeReason: 'rewrote the desert section',
      type: 'text/markdown',
      key: writer.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, document_id: id, version: 2, metadata: { title: 'Biomes', edition: 1 } });
    const done = await svc.waitForStatus(id, 'completed');
    expect(done.version).toBe(2);
    expect(done.size_bytes).toBe(Buffer.byteLength(V2));
  });
});

describe('versions', () => {
  it('lists versions newest first with their records', async () => {
    const res = await svc.request('GET', `/api/v1/documents/${id}/versions`);
    expect(res.status).toBe(200);
    expect(res.body.document_id).toBe(id);
    expect(res.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const [v2, v1] = res.body.versions;
    expect(v2).toMatchObject({
      version: 2,
      created_by: writer.id,
      size_bytes: Buffer.byteLength(V2),
      status: 'completed',
      change_reason: 'rewrote the desert section',
      restored_from: null,
      name: 'biomes-v2.md',
      mime_type: 'text/markdown',
    });
    expect(v2.chunk_count).toBeGreaterThan(1);
    expect(v1).toMatchObject({ version: 1, change_reason: null, name: 'biomes.md' });
    expect(v1.content_hash).not.toBe(v2.content_hash);
  });

  it('reads one version with its metadata', async () => {
    const res = await svc.request('GET', `/api/v1/documents/${id}/versions/1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: 1,
      metadata: { title: 'Biomes', edition: 1 },
      storage_url: expect.any(String),
    });
  });

  it('rejects a non-integer version with 400 and an unknown one with 404', async () => {
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/abc`), 400, 'bad-request');
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/1.5`), 400, 'bad-request');
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/0`), 400, 'bad-request');
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/99`), 404, 'not-found');
    expectProblem(await svc.request('GET', `/api/v1/documents/${randomUUID()}/versions`), 404, 'not-found');
  });

  it('compares two versions chunk by chunk', async () => {
    const res = await svc.request('GET', `/api/v1/documents/${id}/versions/compare?from=1&to=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ document_id: id, from_version: 1, to_version: 2 });
    const { changes } = res.body;
    const changed = changes.added_chunks + changes.removed_chunks + changes.modified_chunks;
    expect(changed).toBeGreaterThan(0);
    // Content-defined chunking: one rewritten section leaves most chunks unchanged.
    expect(changes.unchanged_chunks).toBeGreaterThan(0);
    expect(changes.diff).toHaveLength(changed);
    for (const entry of changes.diff) {
      expect(['added', 'removed', 'modified']).toContain(entry.type);
      expect(entry).toHaveProperty('from_index');
      expect(entry).toHaveProperty('to_index');
    }
    const text = JSON.stringify(changes.diff);
    expect(text).toContain('dune migration');
  });

  it('rejects missing or non-integer from/to with 400 and unknown versions with 404', async () => {
    for (const q of ['', '?from=1', '?to=2', '?from=a&to=2', '?from=1&to=2.5', '?from=0&to=1']) {
      expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/compare${q}`), 400, 'bad-request');
    }
    expectProblem(await svc.request('GET', `/api/v1/documents/${id}/versions/compare?from=1&to=42`), 404, 'not-found');
  });
});

describe('PATCH /documents/:id (metadata only)', () => {
  it('rejects bad bodies with 422 (and a missing body with 400)', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'metadata'],
      [{ metadata: [1, 2] }, 'metadata'],
      [{ metadata: 'title' }, 'metadata'],
      [{ metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) }, 'metadata'],
      [
        { metadata: { ...Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])), change_reason: 'r' } },
        'metadata',
      ],
      [{ metadata: { ['k'.repeat(129)]: 1 } }, 'metadata'],
      [{ metadata: { big: 'b'.repeat(17_000) } }, 'metadata'],
      [{ metadata: {}, change_reason: 5 }, 'change_reason'],
      [{ metadata: { change_reason: ['x'] } }, 'metadata.change_reason'],
      [{ metadata: {}, unexpected: true }, 'unexpected'],
    ];
    for (const [json, field] of cases) {
      const res = await svc.request('PATCH', `/api/v1/documents/${id}`, { json });
      const problem = expectProblem(res, 422, 'validation-error');
      expect(
        problem.errors?.map((e) => e.field),
        JSON.stringify(json).slice(0, 60),
      ).toContain(field);
    }
    expectProblem(await svc.request('PATCH', `/api/v1/documents/${id}`), 400, 'bad-request');
    expectProblem(
      await svc.request('PATCH', `/api/v1/documents/${randomUUID()}`, { json: { metadata: {} } }),
      404,
      'not-found',
    );
    expect((await svc.request('GET', `/api/v1/documents/${id}`)).body.version).toBe(2);
  });

  it('creates version 3 with the same content and new metadata, change_reason moved out', async () => {
    const before = (await svc.request('GET', `/api/v1/documents/${id}`)).body;
    const res = await svc.request('PATCH', `/api/v1/documents/${id}`, {
      json: { metadata: { title: 'Biomes of the world', edition: 2, change_reason: 'retitled' } },
    });
    expect(res.status).toBe(200);
    patchTraceId = res.headers.get('x-request-id') ?? '';
    expect(res.body).toMatchObject({ id, version: 3, metadata: { title: 'Biomes of the world', edition: 2 } });
    expect(res.body.metadata).not.toHaveProperty('change_reason');
    expect(res.body.content_hash).toBe(before.content_hash);
    const done = await svc.waitForStatus(id, 'completed');
    expect(done.version).toBe(3);
    const versions = (await svc.request('GET', `/api/v1/documents/${id}/versions`)).body.versions;
    expect(versions[0]).toMatchObject({ version: 3, change_reason: 'retitled', content_hash: before.content_hash });
    const compare = await svc.request('GET', `/api/v1/documents/${id}/versions/compare?from=2&to=3`);
    expect(compare.body.changes).toMatchObject({ added_chunks: 0, removed_chunks: 0, modified_chunks: 0, diff: [] });
  });
});

describe('POST /documents/:id/rollback', () => {
  it('rejects bad bodies with 422, a missing body with 400', async () => {
    for (const json of [
      {},
      { target_version: 0 },
      { target_version: '1' },
      { target_version: 1.5 },
      { target_version: 1, x: 1 },
    ]) {
      expectProblem(await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json }), 422, 'validation-error');
    }
    expectProblem(await svc.request('POST', `/api/v1/documents/${id}/rollback`), 400, 'bad-request');
  });

  it('answers 404 for an unknown target or document, 409 for the current version', async () => {
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json: { target_version: 99 } }),
      404,
      'not-found',
    );
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${randomUUID()}/rollback`, { json: { target_version: 1 } }),
      404,
      'not-found',
    );
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json: { target_version: 3 } }),
      409,
      'conflict',
    );
  });

  it('restores version 1 as version 4 with 201', async () => {
    const res = await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json: { target_version: 1 } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ document_id: id, version: 4, restored_from: 1, status: expect.any(String) });
    const done = await svc.waitForStatus(id, 'completed');
    expect(done).toMatchObject({ version: 4, metadata: { title: 'Biomes', edition: 1 } });
    const v1 = (await svc.request('GET', `/api/v1/documents/${id}/versions/1`)).body;
    expect(done.content_hash).toBe(v1.content_hash);
    const versions = (await svc.request('GET', `/api/v1/documents/${id}/versions`)).body.versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2, 1]);
    expect(versions[0].restored_from).toBe(1);
    const context = await svc.request('GET', `/api/v1/chunks/${id}/context`);
    expect(context.body.content).not.toContain('dune migration');
  });
});

describe('GET /audit-logs', () => {
  const audit = (query: string, key?: string) =>
    svc.request('GET', `/api/v1/audit-logs${query}`, key === undefined ? {} : { key });

  it('records every version operation of the document', async () => {
    const res = await audit(`?document_id=${id}`);
    expect(res.status).toBe(200);
    const entries = res.body.entries as AuditEntryView[];
    expect(entries.map((e) => e.action).sort()).toEqual(['create', 'rollback', 'update', 'update']);
    expect(res.body.pagination).toMatchObject({ has_more: false, total: 4 });
    for (const e of entries) {
      expect(e).toMatchObject({
        id: expect.any(String),
        workspace_id: svc.workspaceId,
        document_id: id,
        actor: { type: 'api_key', id: expect.any(String) },
        timestamp: expect.any(String),
        trace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    }
    const create = entries.find((e) => e.action === 'create');
    expect(create?.actor.id).toBe(writer.id);
    expect(create?.after).toMatchObject({ version: 1, metadata: { title: 'Biomes', edition: 1 } });
    const patch = entries.find((e) => e.version === 3);
    expect(patch).toMatchObject({
      action: 'update',
      change_reason: 'retitled',
      trace_id: patchTraceId,
      before: { version: 2, metadata: { title: 'Biomes', edition: 1 } },
      after: { version: 3, metadata: { title: 'Biomes of the world', edition: 2 } },
    });
  });

  it('filters by action and time, and pages with the cursor', async () => {
    const rollbacks = await audit(`?document_id=${id}&action=rollback`);
    expect(rollbacks.body.entries.map((e: AuditEntryView) => e.version)).toEqual([4]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await audit(`?document_id=${id}&since=${future}`)).body.entries).toEqual([]);
    expect((await audit(`?document_id=${id}&until=${future}`)).body.entries).toHaveLength(4);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse<{ entries: AuditEntryView[]; pagination: { has_more: boolean; next_cursor: string } }> =
        await audit(`?document_id=${id}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.entries.map((e) => e.id));
      cursor = page.body.pagination.has_more ? page.body.pagination.next_cursor : null;
    } while (cursor);
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(4);
  });

  it('lists newest first with order=desc, paging on in that order; a cursor of the other order is refused', async () => {
    const oldestFirst = (await audit(`?document_id=${id}`)).body.entries.map((e: AuditEntryView) => e.id);
    const first = await audit(`?document_id=${id}&order=desc&limit=3`);
    expect(first.body.entries.map((e: AuditEntryView) => e.action)).toEqual(['rollback', 'update', 'update']);
    expect(first.body.pagination).toMatchObject({ has_more: true, total: 4 });
    const cursor = encodeURIComponent(first.body.pagination.next_cursor);
    const rest = await audit(`?document_id=${id}&order=desc&limit=3&cursor=${cursor}`);
    expect(rest.body.entries.map((e: AuditEntryView) => e.action)).toEqual(['create']);
    expect([...first.body.entries, ...rest.body.entries].map((e: AuditEntryView) => e.id)).toEqual(
      [...oldestFirst].reverse(),
    );
    expectProblem(await audit(`?document_id=${id}&limit=3&cursor=${cursor}`), 400, 'bad-request');
    expectProblem(await audit('?order=newest'), 400, 'bad-request');
  });

  it('shows nothing of another workspace', async () => {
    const res = await audit(`?document_id=${id}`, svc.keys.otherWorkspace);
    expect(res.status).toBe(200);
    expect(res.body.entries).toEqual([]);
  });

  it('rejects bad query parameters with 400', async () => {
    for (const q of [
      '?action=edit',
      '?since=yesterday',
      '?until=2024-01-01',
      '?limit=0',
      '?limit=101',
      '?document_id=abc',
    ]) {
      expectProblem(await audit(q), 400, 'bad-request');
    }
  });
});
