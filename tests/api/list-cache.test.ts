/**
 * Lists are served from a cache of serialised pages and counted totals; these check what a user
 * would notice if it went stale: every change shows in the very next list, whoever made it.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';

let svc: TestApp;

beforeAll(async () => {
  svc = await buildTestApp();
  for (let i = 0; i < 3; i++) expect((await svc.upload(`seed-${i}.txt`, `Seed document ${i}.`)).status).toBe(201);
});
afterAll(async () => {
  await svc?.close();
});

interface ListBody {
  documents: { id: string; status: string; metadata: Record<string, unknown> }[];
  pagination: { total: number; next_cursor: string | null; has_more: boolean };
}

const list = async (query = '?limit=20', key?: string): Promise<ListBody> => {
  const res = await svc.request<ListBody>('GET', `/api/v1/documents${query}`, key === undefined ? {} : { key });
  expect(res.status).toBe(200);
  return res.body;
};

describe('GET /documents served from its cache', () => {
  it('shows a new document first, with the new total, right after its upload', async () => {
    // The same query twice, so the second answer comes from the cache.
    const before = await list();
    expect(await list()).toEqual(before);
    const uploaded = await svc.upload('fresh.txt', 'A document uploaded after the list was cached.');
    expect(uploaded.status).toBe(201);
    const after = await list();
    expect(after.documents[0]?.id).toBe(uploaded.body.document_id);
    expect(after.pagination.total).toBe(before.pagination.total + 1);
  });

  it('drops a deleted document and shows new metadata at once', async () => {
    const before = await list();
    const [first, second] = before.documents;
    expect((await svc.request('DELETE', `/api/v1/documents/${first?.id}`)).status).toBe(204);
    const patched = await svc.request('PATCH', `/api/v1/documents/${second?.id}`, { json: { metadata: { tag: 'x' } } });
    expect(patched.status).toBe(200);
    const after = await list();
    expect(after.documents.map((d) => d.id)).not.toContain(first?.id);
    expect(after.pagination.total).toBe(before.pagination.total - 1);
    expect(after.documents.find((d) => d.id === second?.id)?.metadata).toEqual({ tag: 'x' });
  });

  it('counts again on a later page when a document arrived after the first page', async () => {
    const first = await list('?limit=1');
    const uploaded = await svc.upload('between.txt', 'Uploaded between two pages.');
    expect(uploaded.status).toBe(201);
    const next = await list(`?limit=1&cursor=${encodeURIComponent(first.pagination.next_cursor ?? '')}`);
    expect(next.pagination.total).toBe(first.pagination.total + 1);
  });

  it('shows a change another process made to the same database in the next list', async () => {
    const before = await list();
    const target = before.documents[0];
    expect(target?.status).toBe('pending');
    // Another connection to the same file, as a `kb worker` process sharing the data directory has.
    const other = createSqliteDocumentStore({ file: path.join(svc.dataDir, 'documents.db') });
    try {
      await other.updateVersion(target?.id as string, 1, { status: 'failed' });
    } finally {
      await other.close();
    }
    const after = await list();
    expect(after.documents.find((d) => d.id === target?.id)?.status).toBe('failed');
  });

  it('never answers one workspace with another workspace’s cached page', async () => {
    const mine = await list();
    const theirs = await list('?limit=20', svc.keys.otherWorkspace);
    expect(mine.documents.length).toBeGreaterThan(0);
    expect(theirs.documents).toEqual([]);
    expect(theirs.pagination.total).toBe(0);
  });
});
