/**
 * Documents found by the (source, source_item) they were uploaded with: `source_item` on the
 * upload form, on reads, and `POST /documents/lookup` answering many pairs in one request.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadForm } from '../support/lost-answer.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none' });
});
afterAll(async () => {
  await svc?.close();
});

const upload = (source: string, item: string | null, content: string, key = svc.keys.all) =>
  svc.request('POST', '/api/v1/documents', {
    body: uploadForm({ name: item ?? 'loose.md', content }, item === null ? { source } : { source, source_item: item }),
    key,
  });

interface Match {
  source: string;
  source_item: string;
  document_id: string;
  name: string;
  version: number;
  content_hash: string;
}

const lookup = (items: Array<{ source: string; source_item: string }>, key = svc.keys.all) =>
  svc.request('POST', '/api/v1/documents/lookup', { json: { items }, key });

describe('documents by source item', () => {
  it('keeps the source item of an upload, shows it on reads and finds the documents of many pairs at once', async () => {
    const source = `handbook-${randomUUID()}`;
    const guide = await upload(source, 'guide/index.md', '# Guide\n');
    const api = await upload(source, 'api/index.md', '# API\n');
    await upload(source, null, '# Loose\n');
    expect(guide.status, guide.text).toBe(201);
    expect(guide.body.name).toBe('guide/index.md');

    const read = await svc.request('GET', `/api/v1/documents/${guide.body.document_id}`);
    expect(read.body.source_item).toBe('guide/index.md');
    const list = await svc.request('GET', `/api/v1/documents?source=${source}`);
    expect(
      (list.body.documents as Array<{ name: string; source_item: string | null }>)
        .map((d) => [d.name, d.source_item])
        .sort(),
    ).toEqual([
      ['api/index.md', 'api/index.md'],
      ['guide/index.md', 'guide/index.md'],
      ['loose.md', null],
    ]);

    const replaced = await svc.request('PUT', `/api/v1/documents/${guide.body.document_id}`, {
      body: uploadForm(
        { name: 'guide/index.md', content: '# Guide, second edition\n' },
        { change_reason: 're-ingested' },
      ),
    });
    expect(replaced.status, replaced.text).toBe(200);

    const found = await lookup([
      { source, source_item: 'guide/index.md' },
      { source, source_item: 'api/index.md' },
      { source, source_item: 'missing.md' },
      { source: 'upload', source_item: 'guide/index.md' },
    ]);
    expect(found.status, found.text).toBe(200);
    const matches = found.body.documents as Match[];
    expect(matches.map((m) => [m.source_item, m.document_id, m.version])).toEqual([
      ['api/index.md', api.body.document_id, 1],
      ['guide/index.md', guide.body.document_id, 2],
    ]);
    expect(matches[1]?.content_hash).toBe(replaced.body.content_hash);
    expect(matches[0]?.content_hash).toBe(api.body.content_hash);

    // Another workspace's key finds nothing of this one.
    const other = await lookup([{ source, source_item: 'guide/index.md' }], svc.keys.otherWorkspace);
    expect(other.body.documents).toEqual([]);
  });

  it('refuses an empty or oversized lookup and an empty source item with a 422', async () => {
    expectProblem(await lookup([]), 422, 'validation-error');
    const many = Array.from({ length: 1001 }, (_, i) => ({ source: 's', source_item: `${i}.md` }));
    expectProblem(await lookup(many), 422, 'validation-error');
    const thousand = await lookup(many.slice(0, 1000));
    expect(thousand.status).toBe(200);
    const empty = await svc.request('POST', '/api/v1/documents', {
      body: uploadForm({ name: 'a.md', content: '# A\n' }, { source: 's', source_item: '' }),
    });
    expect(expectProblem(empty, 422, 'validation-error').errors).toEqual([
      { field: 'source_item', message: 'must not be empty' },
    ]);
  });

  it('needs the read permission', async () => {
    const res = await lookup([{ source: 's', source_item: 'a.md' }], svc.keys.search);
    expect(res.status).toBe(403);
  });
});
