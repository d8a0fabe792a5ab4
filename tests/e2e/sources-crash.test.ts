import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DocumentListItemView } from '../../core/model/response-views.model.ts';
import { type ChildService, createKey, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { fetchClient, page, waitForRun, writeFiles } from '../support/source-client.ts';
import type { TestClient } from '../support/test-client.ts';

async function allDocuments(client: TestClient, source: string): Promise<DocumentListItemView[]> {
  const docs: DocumentListItemView[] = [];
  let cursor: string | null = null;
  do {
    const query = `source=${source}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    // biome-ignore lint/suspicious/noExplicitAny: the list page as JSON
    const res: { status: number; body: any } = await client.request('GET', `/api/v1/documents?${query}`);
    expect(res.status).toBe(200);
    docs.push(...res.body.documents);
    cursor = res.body.pagination.next_cursor;
  } while (cursor);
  return docs;
}

/**
 * `kb serve` on the embedded runtime killed with SIGKILL in the middle of a folder sync: the
 * restarted service resumes the run, which ends with one document (version 1) per file. Then a
 * schedule runs syncs with nobody asking.
 */
describe('embedded runtime: a sync survives a crash, and schedules run', () => {
  const cleanups = cleanupsAfterAll();

  it('resumes the interrupted run after a restart without a second version of any item', async () => {
    const data = await tempDir('kb-sources-crash-');
    cleanups.push(data.remove);
    const root = path.join(data.path, 'shared');
    const folder = path.join(root, 'notes');
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`note-${String(i).padStart(3, '0')}.md`] = page(`crash note ${i}`);
    await writeFiles(folder, files, -60);
    const env = {
      KB_DATA_DIR: path.join(data.path, 'data'),
      KB_BOOTSTRAP_KEY: 'false',
      KB_BOOTSTRAP_ACCOUNT: 'false',
      KB_SOURCE_FOLDER_ROOTS: root,
    };
    const { key } = await createKey(env, {
      workspace: 'crash',
      name: 'e2e',
      permissions: 'read,search,write',
      plan: 'enterprise',
    });

    let service: ChildService = await startChild(['serve'], env);
    cleanups.push(() => stopChild(service, 'SIGKILL'));
    let client = fetchClient(service.url, key);
    const created = await client.request('POST', '/api/v1/sources', {
      json: { name: 'notes', kind: 'folder', path: folder },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const started = await client.request('POST', `/api/v1/sources/${id}/sync`);
    expect(started.status).toBe(202);
    const runId = started.body.run_id;
    for (;;) {
      const run = await client.request('GET', `/api/v1/sources/${id}/runs/${runId}`);
      expect(run.body.status, run.text).toBe('running');
      if (run.body.counts.seen >= 100) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await stopChild(service, 'SIGKILL');

    service = await startChild(['serve'], env);
    client = fetchClient(service.url, key);
    const ended = await waitForRun(client, id, runId, { timeoutMs: 120_000 });
    expect(ended.status).toBe('completed');
    expect(ended.counts.seen).toBe(400);
    expect(ended.counts.created + ended.counts.unchanged).toBe(400);
    const docs = await allDocuments(client, 'notes');
    expect(docs).toHaveLength(400);
    expect(new Set(docs.map((d) => d.source_item)).size).toBe(400);
    for (const doc of docs) expect(doc.version).toBe(1);

    // A schedule: a new file shows up without any sync request.
    const patched = await client.request('PATCH', `/api/v1/sources/${id}`, { json: { schedule: 'PT1S' } });
    expect(patched.status).toBe(200);
    await writeFiles(folder, { 'scheduled.md': page('scheduled arrival') });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const items = (await allDocuments(client, 'notes')).map((d) => d.source_item);
      if (items.includes('scheduled.md')) break;
      if (Date.now() > deadline) throw new Error('no scheduled run synchronised the new file');
      await new Promise((r) => setTimeout(r, 250));
    }
    const runs = await client.request('GET', `/api/v1/sources/${id}/runs?limit=100`);
    expect(runs.body.runs.length).toBeGreaterThanOrEqual(2);
    await stopChild(service);
  }, 300_000);
});
