import { mkdir, mkdtemp, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntryView, DocumentListItemView } from '../../core/model/response-views.model.ts';
import type { SourceView } from '../../core/model/source-views.model.ts';
import { ZERO_COUNTS } from '../../core/ports/source-store/source-store.port.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { page, syncAndWait, writeFiles } from '../support/source-client.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * A folder source through its life on the embedded runtime: first sync, unchanged re-sync,
 * changed / added / removed files (versions, diffs, as_of, audit), deletion protection, a failing
 * item, refused paths and concurrent syncs. The describes run in order and build on each other.
 */
let svc: TestApp;
let base: string;
let root: string;
let outside: string;
let folder: string;
let source: SourceView;

const TOPICS = ['aurora', 'basalt', 'cypress', 'dolomite', 'estuary', 'fjord', 'glacier', 'heathland'];
const initialFiles = Object.fromEntries(TOPICS.map((t, i) => [i < 2 ? `guides/${t}.md` : `${t}.md`, page(t)]));

async function sourceDocuments(name: string): Promise<DocumentListItemView[]> {
  const res = await svc.request('GET', `/api/v1/documents?source=${encodeURIComponent(name)}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.documents;
}

async function documentOf(item: string): Promise<DocumentListItemView> {
  const doc = (await sourceDocuments(source.name)).find((d) => d.source_item === item);
  if (!doc) throw new Error(`no document for ${item}`);
  return doc;
}

async function waitUntilIngested(): Promise<void> {
  for (const doc of await sourceDocuments(source.name)) await svc.waitForStatus(doc.document_id, 'completed');
}

async function keywordHits(query: string, asOf?: string): Promise<string[]> {
  const res = await svc.request('POST', '/api/v1/search', {
    json: { query, mode: 'keyword', limit: 20, ...(asOf ? { as_of: asOf } : {}) },
  });
  expect(res.status).toBe(200);
  return (res.body.results as Array<{ content: string }>).map((r) => r.content);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kb-sources-'));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  folder = path.join(root, 'handbook');
  await mkdir(folder, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'secret.md'), page('secret', 'never to be read'));
  await writeFiles(folder, { ...initialFiles, 'drafts/wip.md': page('draft'), '.hidden.md': page('hidden') }, -60);
  // An item no parser takes: a failing item of every run.
  await writeFile(
    path.join(folder, 'logo.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  );
  svc = await buildTestApp({ stages: 'all', env: { KB_SOURCE_FOLDER_ROOTS: root } });
});
afterAll(async () => {
  await svc?.close();
  await rm(base, { recursive: true, force: true });
});

describe('POST /sources', () => {
  it('creates a folder source under an allowed root', async () => {
    const res = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'handbook', kind: 'folder', path: folder, exclude: ['drafts/**'], metadata: { team: 'ops' } },
    });
    expect(res.status).toBe(201);
    source = res.body;
    expect(source).toMatchObject({
      name: 'handbook',
      kind: 'folder',
      path: folder,
      include: [],
      exclude: ['drafts/**'],
      metadata: { team: 'ops' },
      schedule: null,
      status: 'never_synced',
      last_run: null,
    });
    expect((await svc.request('GET', `/api/v1/sources/${source.id}`)).body).toEqual(source);
    expect((await svc.request('GET', '/api/v1/sources')).body.sources).toEqual([source]);
  });

  it('refuses paths outside the roots, with `..`, through a symlink, relative or missing (422)', async () => {
    await symlink(outside, path.join(root, 'escape'));
    const attempts = [
      outside,
      `${folder}/../../outside`,
      path.join(root, 'escape'),
      'handbook',
      path.join(root, 'missing'),
    ];
    for (const attempt of attempts) {
      const res = await svc.request('POST', '/api/v1/sources', {
        json: { name: `n-${uuidv7()}`, kind: 'folder', path: attempt },
      });
      const problem = expectProblem(res, 422, 'validation-error');
      expect(problem.errors?.[0]?.field).toBe('path');
    }
    expect((await svc.request('GET', '/api/v1/sources')).body.sources).toHaveLength(1);
  });

  it('refuses a taken name (409), a bad schedule or an unknown member (422), and needs `write`', async () => {
    expectProblem(
      await svc.request('POST', '/api/v1/sources', { json: { name: 'handbook', kind: 'folder', path: folder } }),
      409,
      'conflict',
    );
    for (const schedule of ['15 minutes', 'P1M', 'PT0S']) {
      const res = await svc.request('POST', '/api/v1/sources', {
        json: { name: 'x', kind: 'folder', path: folder, schedule },
      });
      expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.field).toBe('schedule');
    }
    expectProblem(
      await svc.request('POST', '/api/v1/sources', { json: { name: 'x', kind: 'folder', path: folder, bucket: 'b' } }),
      422,
      'validation-error',
    );
    expectProblem(
      await svc.request('POST', '/api/v1/sources', {
        json: { name: 'x', kind: 'folder', path: folder },
        key: svc.keys.read,
      }),
      403,
      'forbidden',
    );
    expect((await svc.request('GET', `/api/v1/sources/${source.id}`, { key: svc.keys.read })).status).toBe(200);
    expectProblem(
      await svc.request('GET', `/api/v1/sources/${source.id}`, { key: svc.keys.otherWorkspace }),
      404,
      'not-found',
    );
    expectProblem(
      await svc.request('POST', `/api/v1/sources/${source.id}/sync`, { key: svc.keys.read }),
      403,
      'forbidden',
    );
  });
});

describe('first sync', () => {
  it('creates a document per matching item, lists the failing one, and names the source as their creator', async () => {
    const run = await syncAndWait(svc, source.id);
    expect(run).toMatchObject({
      status: 'completed',
      counts: { ...snake(ZERO_COUNTS), seen: 9, created: 8, failed: 1 },
      finished_at: expect.any(String),
    });
    expect(run.errors).toEqual([{ item: 'logo.png', code: 'unsupported-type', detail: expect.any(String) }]);

    const docs = await sourceDocuments('handbook');
    expect(docs.map((d) => d.source_item).sort()).toEqual(Object.keys(initialFiles).sort());
    for (const doc of docs) expect(doc).toMatchObject({ source: 'handbook', version: 1, metadata: { team: 'ops' } });
    const aurora = await documentOf('guides/aurora.md');
    expect(aurora.name).toBe('aurora.md');
    const one = await svc.request('GET', `/api/v1/documents/${aurora.document_id}`);
    expect(one.body.source_item).toBe('guides/aurora.md');
    const versions = await svc.request('GET', `/api/v1/documents/${aurora.document_id}/versions`);
    expect(versions.body.versions[0]).toMatchObject({
      created_by: `source:${source.id}`,
      change_reason: 'sync: added at source',
    });

    const shown = (await svc.request('GET', `/api/v1/sources/${source.id}`)).body;
    expect(shown).toMatchObject({ status: 'completed', last_run: { run_id: run.run_id } });
    await waitUntilIngested();
  });

  it('leaves uploads out of `?source=` and shows them without a source item', async () => {
    const up = await svc.upload('note.md', page('upload'));
    expect(up.status).toBe(201);
    const doc = await svc.request('GET', `/api/v1/documents/${up.body.document_id}`);
    expect(doc.body).toMatchObject({ source: 'upload', source_item: null });
    await svc.waitForStatus(up.body.document_id, 'completed');
    expect((await sourceDocuments('handbook')).map((d) => d.document_id)).not.toContain(up.body.document_id);
  });
});

describe('re-sync', () => {
  it('unchanged: no new version, nothing staged', async () => {
    const objects = await svc.storedObjects();
    const run = await syncAndWait(svc, source.id);
    expect(run.counts).toEqual({ ...snake(ZERO_COUNTS), seen: 9, unchanged: 8, failed: 1 });
    for (const doc of await sourceDocuments('handbook')) expect(doc.version).toBe(1);
    expect(await svc.storedObjects()).toEqual(objects);
  });

  it('a file touched but not changed stays unchanged (same SHA-256)', async () => {
    const now = new Date();
    await utimes(path.join(folder, 'heathland.md'), now, now);
    const run = await syncAndWait(svc, source.id);
    expect(run.counts).toMatchObject({ unchanged: 8, updated: 0, created: 0 });
    expect((await documentOf('heathland.md')).version).toBe(1);
  });

  let before = '';
  it('changed, added and removed items: a new version, a new document, a deleted one', async () => {
    await pause(20);
    before = new Date().toISOString();
    await pause(20);
    const changed = page('cypress', 'a second edition that mentions quicksilver');
    await writeFiles(folder, { 'cypress.md': changed, 'isthmus.md': page('isthmus') });
    await unlink(path.join(folder, 'dolomite.md'));
    const dolomite = await documentOf('dolomite.md');
    const cypress = await documentOf('cypress.md');

    const run = await syncAndWait(svc, source.id);
    expect(run.counts).toEqual({
      ...snake(ZERO_COUNTS),
      seen: 9,
      unchanged: 6,
      updated: 1,
      created: 1,
      deleted: 1,
      failed: 1,
    });

    const history = await svc.request('GET', `/api/v1/documents/${cypress.document_id}/versions`);
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(history.body.versions[0]).toMatchObject({
      created_by: `source:${source.id}`,
      change_reason: 'sync: changed at source',
    });
    await svc.waitForStatus(cypress.document_id, 'completed');
    const compare = await svc.request('GET', `/api/v1/documents/${cypress.document_id}/versions/compare?from=1&to=2`);
    expect(compare.body.changes.modified_chunks).toBe(1);
    expect(compare.body.changes.diff[0]).toMatchObject({
      type: 'modified',
      new_content: expect.stringContaining('quicksilver'),
    });

    expectProblem(await svc.request('GET', `/api/v1/documents/${dolomite.document_id}`), 404, 'not-found');
    const isthmus = await documentOf('isthmus.md');
    expect(isthmus.version).toBe(1);

    const audit = await svc.request('GET', `/api/v1/audit-logs?document_id=${cypress.document_id}`);
    const update = (audit.body.entries as AuditEntryView[]).find((e) => e.action === 'update');
    // The source made these changes, not the key that created the source or started the run.
    const bySource = { type: 'source', id: source.id, name: 'handbook' };
    expect(update).toMatchObject({ actor: bySource, change_reason: 'sync: changed at source', version: 2 });
    const deletion = await svc.request('GET', `/api/v1/audit-logs?document_id=${dolomite.document_id}&action=delete`);
    expect(deletion.body.entries[0].actor).toEqual(bySource);
    const creation = await svc.request('GET', `/api/v1/audit-logs?document_id=${isthmus.document_id}&action=create`);
    expect(creation.body.entries[0].actor).toEqual(bySource);
    // A key's own write still names the key, without a name.
    const up = await svc.upload('by-key.md', page('by key'));
    const byKey = await svc.request('GET', `/api/v1/audit-logs?document_id=${up.body.document_id}`);
    expect(byKey.body.entries[0].actor).toEqual({ type: 'api_key', id: expect.any(String) });
  });

  it('search as of before the change finds the old text and the deleted document', async () => {
    await waitUntilIngested();
    expect((await keywordHits('quicksilver')).join()).toContain('second edition');
    expect(await keywordHits('quicksilver', before)).toEqual([]);
    expect((await keywordHits('cypress', before)).join()).toContain('the first edition');
    expect(await keywordHits('dolomite')).toEqual([]);
    expect((await keywordHits('dolomite', before)).join()).toContain('dolomite');
  });
});

describe('deletion protection', () => {
  it('holds every deletion when too many items go, and lets them through when asked', async () => {
    const gone = ['estuary.md', 'fjord.md', 'glacier.md'];
    for (const name of gone) await unlink(path.join(folder, name));
    const held = await syncAndWait(svc, source.id);
    expect(held.counts).toMatchObject({ deleted: 0, deletions_held: 3 });
    expect(held.errors[0]).toMatchObject({ item: null, code: 'deletions-held' });
    expect((await sourceDocuments('handbook')).map((d) => d.source_item)).toEqual(expect.arrayContaining(gone));

    const allowed = await syncAndWait(svc, source.id, { query: '?allow_mass_delete=true' });
    expect(allowed).toMatchObject({ allow_mass_delete: true, counts: { deleted: 3, deletions_held: 0 } });
    const items = (await sourceDocuments('handbook')).map((d) => d.source_item);
    for (const name of gone) expect(items).not.toContain(name);
  });
});

describe('a symlink inside the folder', () => {
  it('is a failing item, never followed, whether it leads outside or stays inside', async () => {
    await symlink(path.join(outside, 'secret.md'), path.join(folder, 'secret.md'));
    await symlink(path.join(folder, 'heathland.md'), path.join(folder, 'heathland-link.md'));
    await symlink(outside, path.join(folder, 'outside-dir'));
    const run = await syncAndWait(svc, source.id);
    expect(run.status).toBe('completed');
    expect(run.errors).toEqual(
      expect.arrayContaining(
        ['secret.md', 'heathland-link.md', 'outside-dir'].map((item) => ({
          item,
          code: 'path-refused',
          detail: expect.stringContaining('symbolic link'),
        })),
      ),
    );
    expect(run.counts.created).toBe(0);
    const items = (await sourceDocuments('handbook')).map((d) => d.source_item);
    expect(items).not.toContain('heathland-link.md');
    expect(items).not.toContain('secret.md');
    expect(await keywordHits('never')).toEqual([]);
    for (const name of ['secret.md', 'heathland-link.md', 'outside-dir']) await unlink(path.join(folder, name));
  });
});

describe('one run per source', () => {
  it('answers 409 naming the running run, and starts again once it ended', async () => {
    // A run claimed by another process sharing the store.
    const store = svc.runtime.ports.sources;
    const now = new Date().toISOString();
    const other = {
      id: uuidv7(),
      sourceId: source.id,
      workspaceId: svc.workspaceId,
      status: 'running' as const,
      allowMassDelete: false,
      startedAt: now,
      finishedAt: null,
      heartbeatAt: now,
      counts: ZERO_COUNTS,
      errors: [],
    };
    expect('started' in (await store.claimRun(other, new Date(Date.now() - 60_000).toISOString()))).toBe(true);
    const res = await svc.request('POST', `/api/v1/sources/${source.id}/sync`);
    expect(expectProblem(res, 409, 'conflict').detail).toContain(other.id);
    expectProblem(await svc.request('DELETE', `/api/v1/sources/${source.id}`), 409, 'conflict');
    expect((await svc.request('GET', `/api/v1/sources/${source.id}`)).body.status).toBe('running');
    await store.finishRun(other.id, {
      status: 'completed',
      counts: ZERO_COUNTS,
      errors: [],
      finishedAt: new Date().toISOString(),
    });
    expect((await syncAndWait(svc, source.id)).status).toBe('completed');
  });

  it('lets one of two simultaneous requests start a run', async () => {
    const answers = await Promise.all([1, 2, 3].map(() => svc.request('POST', `/api/v1/sources/${source.id}/sync`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1);
    const runs = (await svc.request('GET', `/api/v1/sources/${source.id}/runs?limit=100`)).body.runs;
    // However the requests interleaved, no two runs of the source overlapped.
    const intervals = runs.map((r: { started_at: string; finished_at: string | null }) => [
      r.started_at,
      r.finished_at ?? '~',
    ]);
    intervals.sort();
    for (let i = 1; i < intervals.length; i++) expect(intervals[i][0] >= intervals[i - 1][1]).toBe(true);
    for (const a of answers.filter((x) => x.status !== 202)) expectProblem(a, 409, 'conflict');
  });
});

describe('a source that cannot be read', () => {
  it('fails the run with source-unreachable and deletes nothing', async () => {
    const moved = `${folder}-moved`;
    const { rename } = await import('node:fs/promises');
    await rename(folder, moved);
    try {
      await pause(200);
      const run = await syncAndWait(svc, source.id);
      expect(run.status).toBe('failed');
      expect(run.errors[0]).toMatchObject({ item: null, code: 'source-unreachable' });
      expect(run.counts.deleted).toBe(0);
    } finally {
      await rename(moved, folder);
    }
    expect((await sourceDocuments('handbook')).length).toBeGreaterThan(0);
  });
});

describe('PATCH and DELETE /sources/:id', () => {
  it('changes patterns and schedule, not the name', async () => {
    const res = await svc.request('PATCH', `/api/v1/sources/${source.id}`, {
      json: { include: ['guides/**'], schedule: 'PT1H' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ include: ['guides/**'], schedule: 'PT1H', name: 'handbook' });
    expectProblem(
      await svc.request('PATCH', `/api/v1/sources/${source.id}`, { json: { name: 'renamed' } }),
      422,
      'validation-error',
    );
    expectProblem(
      await svc.request('PATCH', `/api/v1/sources/${source.id}`, { json: { path: outside } }),
      422,
      'validation-error',
    );
  });

  it('removes the source, and its documents only when asked', async () => {
    const keep = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'kept', kind: 'folder', path: folder, include: ['guides/**'] },
    });
    await syncAndWait(svc, keep.body.id);
    expect(await sourceDocuments('kept')).toHaveLength(2);
    expect((await svc.request('DELETE', `/api/v1/sources/${keep.body.id}`)).status).toBe(204);
    expect(await sourceDocuments('kept')).toHaveLength(2);
    expectProblem(await svc.request('GET', `/api/v1/sources/${keep.body.id}`), 404, 'not-found');

    expect((await svc.request('DELETE', `/api/v1/sources/${source.id}?delete_documents=true`)).status).toBe(204);
    expect(await sourceDocuments('handbook')).toEqual([]);
  });
});

function snake(counts: typeof ZERO_COUNTS) {
  const { deletionsHeld, ...rest } = counts;
  return { ...rest, deletions_held: deletionsHeld };
}
