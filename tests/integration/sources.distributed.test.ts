import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'minio';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentListItemView } from '../../core/model/response-views.model.ts';
import { createOpenSearchSourceStore } from '../../core/ports/source-store/opensearch.adapter.ts';
import { ZERO_COUNTS } from '../../core/ports/source-store/source-store.port.ts';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { fetchClient, page, syncAndWait, waitForRun, writeFiles } from '../support/source-client.ts';
import type { TestClient } from '../support/test-client.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * Folder sources on the distributed runtime: an API process without stages and worker processes
 * that run the pipeline and the sync requests of the message log. First sync, re-sync, changes,
 * deletion protection, refused paths, a run claimed by another process (409), and a worker killed
 * with SIGKILL in the middle of a run: another worker resumes it without a second version.
 */
let setup: DistributedEnv;
let env: Record<string, string>;
let api: ChildService;
const workers: ChildService[] = [];
let client: TestClient;
let base: string;
let root: string;
let folder: string;
let sourceId: string;
let web: Server;
let webOrigin: string;
const pages = new Map<string, { body: string; etag: string }>();

const TOPICS = ['aurora', 'basalt', 'cypress', 'dolomite', 'estuary', 'fjord', 'glacier', 'heathland'];

/** Every document of a source (all pages), once the API's list shows `expected` of them. */
async function sourceDocuments(name: string, expected?: number): Promise<DocumentListItemView[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const docs: DocumentListItemView[] = [];
    let cursor: string | null = null;
    do {
      // biome-ignore lint/suspicious/noExplicitAny: the list page as JSON
      const res: { status: number; body: any } = await client.request(
        'GET',
        `/api/v1/documents?source=${encodeURIComponent(name)}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.status).toBe(200);
      docs.push(...res.body.documents);
      cursor = res.body.pagination.next_cursor;
    } while (cursor);
    if (expected === undefined || docs.length === expected || Date.now() > deadline) return docs;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function keywordHits(query: string, asOf?: string): Promise<string[]> {
  const res = await client.request('POST', '/api/v1/search', {
    json: { query, mode: 'keyword', limit: 20, ...(asOf ? { as_of: asOf } : {}) },
  });
  expect(res.status).toBe(200);
  return (res.body.results as Array<{ content: string }>).map((r) => r.content);
}

beforeAll(async () => {
  setup = distributedEnv();
  base = await mkdtemp(path.join(os.tmpdir(), 'kb-sources-dist-'));
  root = path.join(base, 'root');
  folder = path.join(root, 'handbook');
  await mkdir(folder, { recursive: true });
  await mkdir(path.join(base, 'outside'), { recursive: true });
  await writeFiles(folder, Object.fromEntries(TOPICS.map((t) => [`${t}.md`, page(t)])), -60);
  await writeFile(
    path.join(folder, 'logo.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  );
  web = createServer((req, res) => {
    const found = pages.get(req.url ?? '');
    if (!found) return void res.writeHead(404).end();
    if (req.headers['if-none-match'] === found.etag) return void res.writeHead(304, { etag: found.etag }).end();
    res.writeHead(200, { etag: found.etag, 'content-type': 'text/markdown' }).end(found.body);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webOrigin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  env = {
    ...setup.env,
    KB_SOURCE_FOLDER_ROOTS: root,
    KB_SOURCE_RUN_STALE_MS: '3000',
    KB_OUTBOUND_ALLOW_PRIVATE: 'true',
    KB_SOURCE_SECRET_KEY: randomBytes(32).toString('hex'),
  };
  api = await startChild(['serve'], env, { timeoutMs: 120_000 });
  workers.push(await startChild(['worker'], env, { waitForHttp: false }));
  const key = await createKey(env, {
    workspace: 'ws-sources',
    name: 'sources',
    permissions: 'read,search,write',
    plan: 'enterprise',
  });
  client = fetchClient(api.url, key.key);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([api, ...workers].filter(Boolean).map((c) => stopChild(c)));
  await setup?.cleanup();
  await rm(base, { recursive: true, force: true });
  await new Promise((resolve) => web?.close(resolve));
}, 120_000);

describe('a folder source on the distributed runtime', () => {
  it('refuses a path outside the roots (422)', async () => {
    for (const attempt of [path.join(base, 'outside'), `${folder}/../../outside`]) {
      const res = await client.request('POST', '/api/v1/sources', {
        json: { name: 'escape', kind: 'folder', path: attempt },
      });
      expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.field).toBe('path');
    }
  });

  it('first sync creates a document per item and lists the failing one', async () => {
    const created = await client.request('POST', '/api/v1/sources', {
      json: { name: 'handbook', kind: 'folder', path: folder, metadata: { team: 'ops' } },
    });
    expect(created.status).toBe(201);
    sourceId = created.body.id;
    const run = await syncAndWait(client, sourceId, { timeoutMs: 120_000 });
    expect(run).toMatchObject({ status: 'completed', counts: { seen: 9, created: 8, failed: 1 } });
    expect(run.errors.map((e) => e.item)).toEqual(['logo.png']);
    const docs = await sourceDocuments('handbook', 8);
    expect(docs.map((d) => d.source_item).sort()).toEqual(TOPICS.map((t) => `${t}.md`));
    for (const doc of docs) await client.waitForStatus(doc.document_id, 'completed', { timeoutMs: 120_000 });
  });

  it('re-syncs unchanged items without a version', async () => {
    const run = await syncAndWait(client, sourceId, { timeoutMs: 60_000 });
    expect(run.counts).toMatchObject({ unchanged: 8, created: 0, updated: 0 });
    for (const doc of await sourceDocuments('handbook', 8)) expect(doc.version).toBe(1);
  });

  it('turns a change into a version (as_of before it finds the old text), a new item into a document, a gone one into a deletion', async () => {
    await new Promise((r) => setTimeout(r, 50));
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 50));
    await writeFiles(folder, {
      'cypress.md': page('cypress', 'a second edition about quicksilver'),
      'isthmus.md': page('isthmus'),
    });
    await unlink(path.join(folder, 'dolomite.md'));
    const run = await syncAndWait(client, sourceId, { timeoutMs: 60_000 });
    expect(run.counts).toMatchObject({ updated: 1, created: 1, deleted: 1, unchanged: 6 });
    const docs = await sourceDocuments('handbook', 8);
    const cypress = docs.find((d) => d.source_item === 'cypress.md');
    // Read by id: a worker wrote the version, and lists show it after the next refresh.
    expect((await client.request('GET', `/api/v1/documents/${cypress?.document_id}`)).body.version).toBe(2);
    const history = await client.request('GET', `/api/v1/documents/${cypress?.document_id}/versions`);
    expect(history.body.versions[0]).toMatchObject({
      created_by: `source:${sourceId}`,
      change_reason: 'sync: changed at source',
    });
    // The worker audited the change in ClickHouse as the source, with its name.
    const audit = await client.request('GET', `/api/v1/audit-logs?document_id=${cypress?.document_id}&action=update`);
    expect(audit.body.entries[0]?.actor).toEqual({ type: 'source', id: sourceId, name: 'handbook' });
    await client.waitForStatus(String(cypress?.document_id), 'completed', { timeoutMs: 120_000 });
    for (const doc of docs) await client.waitForStatus(doc.document_id, 'completed', { timeoutMs: 120_000 });
    expect((await keywordHits('quicksilver')).join()).toContain('second edition');
    expect(await keywordHits('quicksilver', before)).toEqual([]);
    expect((await keywordHits('dolomite', before)).join()).toContain('dolomite');
    expect(await keywordHits('dolomite')).toEqual([]);
  });

  it('holds mass deletions unless allowed', async () => {
    for (const name of ['estuary.md', 'fjord.md', 'glacier.md']) await unlink(path.join(folder, name));
    const held = await syncAndWait(client, sourceId, { timeoutMs: 60_000 });
    expect(held.counts).toMatchObject({ deleted: 0, deletions_held: 3 });
    const allowed = await syncAndWait(client, sourceId, { query: '?allow_mass_delete=true', timeoutMs: 60_000 });
    expect(allowed.counts).toMatchObject({ deleted: 3, deletions_held: 0 });
    expect(await sourceDocuments('handbook', 5)).toHaveLength(5);
  });

  it('answers 409 while another process holds a run of the source', async () => {
    const store = await createOpenSearchSourceStore({
      url: setup.config.opensearch.url ?? '',
      indexPrefix: setup.config.opensearch.indexPrefix,
    });
    try {
      const now = new Date().toISOString();
      const run = {
        id: uuidv7(),
        sourceId,
        workspaceId: 'ws-sources',
        status: 'running' as const,
        allowMassDelete: false,
        startedAt: now,
        finishedAt: null,
        heartbeatAt: new Date(Date.now() + 1).toISOString(),
        counts: ZERO_COUNTS,
        errors: [],
      };
      expect('started' in (await store.claimRun(run, new Date(Date.now() - 60_000).toISOString()))).toBe(true);
      const res = await client.request('POST', `/api/v1/sources/${sourceId}/sync`);
      expect(expectProblem(res, 409, 'conflict').detail).toContain(run.id);
      await store.finishRun(run.id, {
        status: 'completed',
        counts: ZERO_COUNTS,
        errors: [],
        finishedAt: new Date().toISOString(),
      });
    } finally {
      await store.close();
    }
  });

  it('syncs web pages from a loopback server, a changed page becoming a version', async () => {
    pages.set('/a.md', { body: page('web alpha'), etag: '"a1"' });
    pages.set('/b.md', { body: page('web beta'), etag: '"b1"' });
    const created = await client.request('POST', '/api/v1/sources', {
      json: { name: 'site', kind: 'web', urls: [`${webOrigin}/a.md`, `${webOrigin}/b.md`] },
    });
    expect(created.status).toBe(201);
    expect((await syncAndWait(client, created.body.id, { timeoutMs: 60_000 })).counts).toMatchObject({ created: 2 });
    pages.set('/a.md', { body: page('web alpha', 'revised'), etag: '"a2"' });
    const run = await syncAndWait(client, created.body.id, { timeoutMs: 60_000 });
    expect(run.counts).toMatchObject({ updated: 1, unchanged: 1 });
    const docs = await sourceDocuments('site', 2);
    const alpha = docs.find((d) => d.source_item === `${webOrigin}/a.md`);
    // Read by id (another process wrote the version; lists show it after the next refresh).
    const one = await client.request('GET', `/api/v1/documents/${alpha?.document_id}`);
    expect(one.body).toMatchObject({ version: 2, source_item: `${webOrigin}/a.md` });
  });

  it('syncs an S3 bucket on MinIO with stored credentials', async () => {
    const s3 = setup.config.s3;
    const url = new URL(s3.endpoint ?? '');
    const minio = new Client({
      endPoint: url.hostname,
      port: Number(url.port || 80),
      useSSL: url.protocol === 'https:',
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: s3.region,
      pathStyle: true,
    });
    const bucket = `kbtest-src-${randomBytes(4).toString('hex')}`;
    await minio.makeBucket(bucket, s3.region);
    try {
      await minio.putObject(bucket, 'one.md', Buffer.from(page('object one')));
      await minio.putObject(bucket, 'two.md', Buffer.from(page('object two')));
      const created = await client.request('POST', '/api/v1/sources', {
        json: {
          name: 'objects',
          kind: 's3',
          endpoint: s3.endpoint,
          bucket,
          region: s3.region,
          access_key: s3.accessKey,
          secret_key: s3.secretKey,
        },
      });
      expect(created.status).toBe(201);
      expect(created.text).not.toContain(s3.secretKey);
      const run = await syncAndWait(client, created.body.id, { timeoutMs: 60_000 });
      expect(run.counts).toMatchObject({ seen: 2, created: 2, failed: 0 });
      expect((await syncAndWait(client, created.body.id, { timeoutMs: 60_000 })).counts).toMatchObject({
        unchanged: 2,
      });
    } finally {
      await minio.removeObjects(bucket, ['one.md', 'two.md']);
      await minio.removeBucket(bucket);
    }
  });

  it('runs a schedule in the workers', async () => {
    const patched = await client.request('PATCH', `/api/v1/sources/${sourceId}`, { json: { schedule: 'PT1S' } });
    expect(patched.status).toBe(200);
    await writeFiles(folder, { 'scheduled.md': page('scheduled') });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const items = (await sourceDocuments('handbook')).map((d) => d.source_item);
      if (items.includes('scheduled.md')) break;
      if (Date.now() > deadline) throw new Error('no scheduled run synchronised the new file');
      await new Promise((r) => setTimeout(r, 500));
    }
    await client.request('PATCH', `/api/v1/sources/${sourceId}`, { json: { schedule: null } });
  });

  it('survives a worker killed with SIGKILL mid-run: another resumes it, and no item gets two versions', async () => {
    const bulk = path.join(root, 'bulk');
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`note-${String(i).padStart(3, '0')}.md`] = page(`bulk note ${i}`);
    await writeFiles(bulk, files, -60);
    const created = await client.request('POST', '/api/v1/sources', {
      json: { name: 'bulk', kind: 'folder', path: bulk },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const started = await client.request('POST', `/api/v1/sources/${id}/sync`);
    expect(started.status).toBe(202);
    const runId = started.body.run_id;

    // Kill the worker once the run has made progress.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const run = await client.request('GET', `/api/v1/sources/${id}/runs/${runId}`);
      expect(run.status, run.text).toBe(200);
      if (run.body.counts.seen >= 30) break;
      expect(run.body.status).toBe('running');
      if (Date.now() > deadline) throw new Error(`the run made no progress: ${run.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const killed = workers.shift() as ChildService;
    killed.process.kill('SIGKILL');
    await killed.exited;
    const midway = (await client.request('GET', `/api/v1/sources/${id}/runs/${runId}`)).body;
    expect(midway.status).toBe('running');
    expect(midway.counts.seen).toBeLessThan(300);

    workers.push(await startChild(['worker'], env, { waitForHttp: false }));
    const ended = await waitForRun(client, id, runId, { timeoutMs: 240_000 });
    expect(ended.status).toBe('completed');
    expect(ended.counts.seen).toBe(300);
    expect(ended.counts.created + ended.counts.unchanged).toBe(300);

    const docs = await sourceDocuments('bulk', 300);
    expect(docs).toHaveLength(300);
    expect(new Set(docs.map((d) => d.source_item)).size).toBe(300);
    // Each read by id (real time, whatever the list's refresh): one version each.
    for (const doc of docs) {
      expect((await client.request('GET', `/api/v1/documents/${doc.document_id}`)).body.version).toBe(1);
    }
  }, 400_000);
});
