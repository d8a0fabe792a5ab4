import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChildService, createKey, REPO_ROOT, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

/**
 * The distributed runtime end to end on the native engines: one API process and two worker
 * processes with the stages split between them, then a worker killed mid-stage, then two API
 * processes sharing one key's rate limit.
 */
const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures', 'files');
const FORMATS = [
  'plain.txt',
  'sample.md',
  'quoted.csv',
  'nested.json',
  'multipage.pdf',
  'report.docx',
  'workbook.xlsx',
];

let setup: DistributedEnv;
let key: string;
let api: ChildService;
const children: ChildService[] = [];

async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  pathname: string,
  body?: unknown,
  apiKey = key,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${base}${pathname}`, {
    method,
    headers: { 'X-API-Key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  }).catch((error: unknown) => {
    throw new Error(`${method} ${base}${pathname}: ${String(error)}`);
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T, headers: response.headers };
}

async function upload(base: string, name: string, content: Uint8Array | string, documentId?: string) {
  const form = new FormData();
  form.append('file', new Blob([content]), name);
  const response = await fetch(`${base}/api/v1/documents${documentId ? `/${documentId}` : ''}`, {
    method: documentId ? 'PUT' : 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(documentId ? 200 : 201);
  return String(body.document_id ?? body.id);
}

async function waitCompleted(base: string, id: string, version?: number, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(base, 'GET', `/api/v1/documents/${id}`);
    if (body.status === 'failed') throw new Error(`document ${id} failed: ${JSON.stringify(body.error)}`);
    if (body.status === 'completed' && (version === undefined || body.version === version)) return body;
    if (Date.now() > deadline) throw new Error(`document ${id} is still ${String(body.status)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function allChunks(base: string, id: string) {
  const { body } = await call<{ chunks: Array<{ id: string; index: number; content: string }> }>(
    base,
    'GET',
    `/api/v1/chunks/${id}?limit=1000`,
  );
  return body.chunks;
}

/** The longest word of a document's chunks: something only that document is likely to contain. */
function distinctiveWord(texts: string[]): string {
  const words = texts.join(' ').match(/\p{L}{6,}/gu) ?? [];
  return [...words].sort((a, b) => b.length - a.length || a.localeCompare(b))[0] ?? '';
}

beforeAll(async () => {
  setup = distributedEnv();
  const created = await createKey(setup.env, {
    workspace: 'e2e',
    name: 'e2e',
    permissions: 'read,search,write',
    plan: 'enterprise',
  });
  key = created.key;
  api = await startChild(['serve'], setup.env, { timeoutMs: 120_000 });
  children.push(api);
  children.push(await startChild(['worker', '--stages', 'parse,chunk'], setup.env, { waitForHttp: false }));
  children.push(await startChild(['worker', '--stages', 'embed,index'], setup.env, { waitForHttp: false }));
}, 300_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const child of children) {
      console.error(`--- kb ${child.process.spawnargs.slice(2).join(' ')} (${child.url}) printed:\n${child.output()}`);
    }
  });
});

afterAll(async () => {
  await Promise.allSettled(children.map((c) => stopChild(c)));
  await setup?.cleanup();
}, 120_000);

describe('distributed runtime, API + two workers', () => {
  const ids = new Map<string, string>();

  it('ingests every format and finds each by its own content', async () => {
    for (const file of FORMATS) ids.set(file, await upload(api.url, file, await readFile(path.join(FIXTURES, file))));
    for (const [file, id] of ids) {
      const doc = await waitCompleted(api.url, id);
      const chunks = await allChunks(api.url, id);
      expect(chunks.length, file).toBe((doc.stats as { chunks: number }).chunks);
      const word = distinctiveWord(chunks.map((c) => c.content));
      const { body } = await call<{ results: Array<{ document_id: string }> }>(api.url, 'POST', '/api/v1/search', {
        query: word,
        mode: 'keyword',
        limit: 20,
      });
      expect(
        body.results.map((r) => r.document_id),
        `${file}: "${word}"`,
      ).toContain(id);
    }
    const hybrid = await call<{ results: unknown[] }>(api.url, 'POST', '/api/v1/search', {
      query: 'spreadsheet revenue',
    });
    expect(hybrid.status).toBe(200);
  });

  it('reads a scanned page through OCR and fails a hostile file alone, with a clear code', async () => {
    const scanned = await upload(api.url, 'scanned.pdf', await readFile(path.join(FIXTURES, 'scanned.pdf')));
    const encrypted = await upload(api.url, 'encrypted.pdf', await readFile(path.join(FIXTURES, 'encrypted.pdf')));
    await waitCompleted(api.url, scanned);
    const chunks = await allChunks(api.url, scanned);
    expect(chunks.length).toBeGreaterThan(0);
    const deadline = Date.now() + 120_000;
    let doc: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      doc = (await call(api.url, 'GET', `/api/v1/documents/${encrypted}`)).body;
      if (doc.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatchObject({ code: 'encrypted-file', stage: 'parse', attempts: 1 });
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200);
  });

  it('updates, rolls back, answers as_of, audits and deletes', async () => {
    const id = await upload(api.url, 'timeline.md', '# Timeline\n\nThe first draft mentions marmalade orchards.\n');
    await waitCompleted(api.url, id, 1);
    const t1 = new Date().toISOString();
    await upload(api.url, 'timeline.md', '# Timeline\n\nThe second draft mentions tungsten lanterns.\n', id);
    await waitCompleted(api.url, id, 2);
    const t2 = new Date().toISOString();
    const rollback = await call(api.url, 'POST', `/v1/documents/${id}/rollback`, { target_version: 1 });
    expect(rollback.status).toBe(201);
    expect(rollback.body).toMatchObject({ version: 3, restored_from: 1 });
    await waitCompleted(api.url, id, 3);

    const search = async (query: string, asOf?: string) =>
      (
        await call<{ results: Array<{ document_id: string; version: number }> }>(api.url, 'POST', '/v1/search', {
          query,
          mode: 'keyword',
          ...(asOf ? { as_of: asOf } : {}),
        })
      ).body.results.filter((r) => r.document_id === id);
    expect((await search('marmalade', t1)).map((r) => r.version)).toEqual([1]);
    expect(await search('tungsten', t1)).toEqual([]);
    expect((await search('tungsten', t2)).map((r) => r.version)).toEqual([2]);
    expect(await search('marmalade', t2)).toEqual([]);
    expect((await search('marmalade')).map((r) => r.version)).toEqual([3]);

    const patched = await call<{ version: number }>(api.url, 'PATCH', `/api/v1/documents/${id}`, {
      metadata: { stage: 'final' },
      change_reason: 'label',
    });
    expect(patched.body.version).toBe(4);
    const v4 = await waitCompleted(api.url, id, 4);
    expect(v4.metadata).toEqual({ stage: 'final' });
    const filtered = await call<{ results: Array<{ version: number }> }>(api.url, 'POST', '/api/v1/search', {
      query: 'marmalade',
      mode: 'keyword',
      filters: { metadata: { stage: 'final' }, document_ids: [id] },
    });
    expect(filtered.body.results.map((r) => r.version)).toEqual([4]);

    const compare = await call<{ changes: { modified_chunks: number } }>(
      api.url,
      'GET',
      `/v1/documents/${id}/versions/compare?from=1&to=2`,
    );
    expect(compare.status).toBe(200);
    expect(compare.body.changes.modified_chunks).toBe(1);

    expect((await call(api.url, 'DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
    expect((await call(api.url, 'GET', `/api/v1/documents/${id}`)).status).toBe(404);
    expect(await search('marmalade')).toEqual([]);
    expect((await search('marmalade', t1)).map((r) => r.version)).toEqual([1]);

    const audit = await call<{ entries: Array<{ action: string; version: number }> }>(
      api.url,
      'GET',
      `/v1/audit-logs?document_id=${id}`,
    );
    expect(audit.body.entries.map((e) => e.action)).toEqual(['create', 'update', 'rollback', 'update', 'delete']);
  });
});

describe('distributed runtime, two API processes', () => {
  it('share one key’s rate limit through ClickHouse', async () => {
    const starter = await createKey(setup.env, {
      workspace: 'e2e',
      name: 'limited',
      permissions: 'read',
      plan: 'starter',
    });
    const second = await startChild(['serve'], setup.env, { timeoutMs: 120_000 });
    children.push(second);
    let ok = 0;
    let limited = 0;
    for (let i = 0; i < 200; i++) {
      const base = i % 2 === 0 ? api.url : second.url;
      const response = await call(base, 'GET', '/api/v1/documents?limit=1', undefined, starter.key);
      if (response.status === 200) ok++;
      else if (response.status === 429) limited++;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(ok + limited).toBe(200);
    // The limit is 100 a minute across both processes; overshoot is bounded by one sync interval of traffic.
    expect(ok).toBeGreaterThanOrEqual(100);
    expect(ok).toBeLessThanOrEqual(130);
  });
});

describe('distributed runtime, a worker killed mid-stage', () => {
  it('another worker of the group takes over and every document is indexed exactly once', async () => {
    // Two more workers for embed+index: three members share that group, one is killed mid-run.
    const extra = await startChild(['worker', '--stages', 'embed,index'], setup.env, { waitForHttp: false });
    const victim = await startChild(['worker', '--stages', 'embed,index'], setup.env, { waitForHttp: false });
    children.push(extra, victim);
    await new Promise((r) => setTimeout(r, 5000)); // let the group rebalance
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const paragraphs = Array.from(
        { length: 30 },
        (_, p) => `Section ${p} of report ${i} describes the harbour crane number ${i * 100 + p} in detail.`,
      );
      ids.push(await upload(api.url, `report-${i}.md`, `# Report ${i}\n\n${paragraphs.join('\n\n')}\n`));
    }
    await new Promise((r) => setTimeout(r, 1500));
    victim.process.kill('SIGKILL');
    await victim.exited;
    for (const id of ids) {
      const doc = await waitCompleted(api.url, id, 1, 240_000);
      const chunks = await allChunks(api.url, id);
      const expected = (doc.stats as { chunks: number }).chunks;
      expect(chunks.length).toBe(expected);
      expect(new Set(chunks.map((c) => c.id)).size).toBe(expected);
      expect(chunks.map((c) => c.index)).toEqual(Array.from({ length: expected }, (_, i) => i));
      const versions = await call<{ versions: Array<{ version: number }> }>(
        api.url,
        'GET',
        `/v1/documents/${id}/versions`,
      );
      expect(versions.body.versions.map((v) => v.version)).toEqual([1]);
    }
    // Search sees each chunk once.
    const { body } = await call<{ results: Array<{ chunk_id: string }> }>(api.url, 'POST', '/api/v1/search', {
      query: 'harbour crane report',
      mode: 'keyword',
      limit: 100,
    });
    expect(new Set(body.results.map((r) => r.chunk_id)).size).toBe(body.results.length);
  });
});
