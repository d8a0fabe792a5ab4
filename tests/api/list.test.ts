import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { expectProblem } from '../support/test-service.ts';

let svc: TestApp;
const ids: string[] = [];

beforeAll(async () => {
  // No stages: 25 documents stay `pending`, which is all listing needs.
  svc = await buildTestApp();
  for (let i = 0; i < 25; i++) {
    const res = await svc.upload(`doc-${i}.txt`, `Document number ${i}.`, {
      metadata: { n: i },
      source: i % 5 === 0 ? 'crm' : 'upload',
    });
    expect(res.status).toBe(201);
    ids.push(res.body.document_id);
  }
});
afterAll(async () => {
  await svc?.close();
});

const list = (query = '', key?: string) =>
  svc.request('GET', `/api/v1/documents${query}`, key === undefined ? {} : { key });

describe('GET /documents, cursor mode (default)', () => {
  it('returns the first page with pagination and newest documents first', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.documents).toHaveLength(20);
    expect(res.body.pagination).toEqual({ has_more: true, next_cursor: expect.any(String), total: 25 });
    expect(res.body.total).toBeUndefined();
    const expected = [...ids].reverse().slice(0, 20);
    expect(res.body.documents.map((d: { id: string }) => d.id)).toEqual(expected);
    const first = res.body.documents[0];
    expect(first).toMatchObject({
      id: ids[24],
      document_id: ids[24],
      status: 'pending',
      version: 1,
      metadata: { n: 24 },
      stats: { chunks: 0, tokens: 0 },
    });
    expect(Date.parse(first.created_at)).not.toBeNaN();
    expect(Date.parse(first.updated_at)).not.toBeNaN();
  });

  it('gives every item its name, type and source, in both modes', async () => {
    for (const query of ['?limit=25', '?page=1&page_size=25']) {
      const res = await list(query);
      expect(res.status).toBe(200);
      const items = res.body.documents as Array<{ id: string; name: string; mime_type: string; source: string }>;
      expect(items).toHaveLength(25);
      for (const item of items) {
        const i = ids.indexOf(item.id);
        expect(item, query).toMatchObject({
          name: `doc-${i}.txt`,
          mime_type: 'text/plain',
          source: i % 5 === 0 ? 'crm' : 'upload',
        });
      }
    }
  });

  it('pages through 25 documents with the cursor, each exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const res = await list(`?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(res.body.documents.length);
      seen.push(...res.body.documents.map((d: { id: string }) => d.id));
      expect(res.body.pagination.total).toBe(25);
      cursor = res.body.pagination.has_more ? res.body.pagination.next_cursor : null;
    } while (cursor);
    expect(pages).toEqual([10, 10, 5]);
    expect(seen).toEqual([...ids].reverse());
  });
});

describe('GET /documents, offset mode', () => {
  it('is chosen by page or page_size and reports totals', async () => {
    const page2 = await list('?page=2&page_size=10');
    expect(page2.status).toBe(200);
    expect(page2.body).toMatchObject({ total: 25, page: 2, page_size: 10 });
    expect(page2.body.pagination).toBeUndefined();
    expect(page2.body.documents.map((d: { id: string }) => d.id)).toEqual([...ids].reverse().slice(10, 20));

    const page3 = await list('?page=3&page_size=10');
    expect(page3.body.documents).toHaveLength(5);

    const onlySize = await list('?page_size=7');
    expect(onlySize.body).toMatchObject({ total: 25, page: 1, page_size: 7 });
    expect(onlySize.body.documents).toHaveLength(7);

    const onlyPage = await list('?page=2');
    expect(onlyPage.body).toMatchObject({ total: 25, page: 2, page_size: 20 });
    expect(onlyPage.body.documents).toHaveLength(5);

    const beyond = await list('?page=9&page_size=10');
    expect(beyond.body).toMatchObject({ documents: [], total: 25, page: 9 });
  });
});

describe('GET /documents filters', () => {
  it('filters by status', async () => {
    expect((await list('?status=pending&limit=100')).body.pagination.total).toBe(25);
    expect((await list('?status=completed')).body).toMatchObject({ documents: [], pagination: { total: 0 } });
  });

  it('filters by source', async () => {
    const res = await list('?source=crm');
    expect(res.body.pagination.total).toBe(5);
    expect(res.body.documents.map((d: { metadata: { n: number } }) => d.metadata.n)).toEqual([20, 15, 10, 5, 0]);
  });

  it('filters by creation time', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const past = '2000-01-01T00:00:00Z';
    expect((await list(`?created_after=${future}`)).body.pagination.total).toBe(0);
    expect((await list(`?created_before=${future}`)).body.pagination.total).toBe(25);
    expect((await list(`?created_after=${past}`)).body.pagination.total).toBe(25);
    expect((await list(`?created_before=${past}`)).body.pagination.total).toBe(0);
  });

  it('shows nothing of another workspace', async () => {
    const res = await list('', svc.keys.otherWorkspace);
    expect(res.body).toMatchObject({ documents: [], pagination: { total: 0, has_more: false } });
  });
});

describe('GET /documents rejects bad query parameters with 400', () => {
  it.each([
    ['cursor with page', '?cursor=abc&page=1'],
    ['cursor with page_size', '?cursor=abc&page_size=5'],
    ['limit with page_size', '?limit=5&page_size=5'],
    ['limit 0', '?limit=0'],
    ['limit 101', '?limit=101'],
    ['limit not a number', '?limit=ten'],
    ['limit not an integer', '?limit=2.5'],
    ['page 0', '?page=0'],
    ['a page whose offset would overflow', '?page=99999999999999999999'],
    ['page 1,000,001', '?page=1000001'],
    ['page_size 0', '?page_size=0'],
    ['page_size 101', '?page_size=101'],
    ['an unknown status', '?status=done'],
    ['a bad created_after', '?created_after=yesterday'],
    ['a date without time zone', '?created_before=2024-01-01T10:00:00'],
  ])('%s', async (_label, query) => {
    const res = await list(query);
    expectProblem(res, 400, 'bad-request');
  });

  it('names the offending parameter', async () => {
    const problem = expectProblem(await list('?status=done'), 400, 'bad-request');
    expect(problem.detail).toContain('status');
    expect(problem.detail).toContain('pending');
  });

  it('rejects a cursor that was never issued', async () => {
    expectProblem(await list('?cursor=not-a-real-cursor'), 400, 'bad-request');
  });
});
