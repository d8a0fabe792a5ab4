import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, createKey, kb, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

/**
 * Scoped tokens on the real engines (OpenSearch, ClickHouse, Kafka): two tenants' tokens from one
 * key, minted on one API process and used on another that shares the token secret; every search
 * mode, `as_of`, `group_by`, widening filters, the document reads, MCP, writes, tampered tokens
 * and a revoked parent. A process without `KB_TOKEN_SECRET` mints none.
 */
let setup: DistributedEnv;
let env: Record<string, string>;
let apiA: ChildService;
let apiB: ChildService;
let writer: string;
let parent: { id: string; key: string };

interface Tenant {
  readonly name: string;
  readonly word: string;
  docs: string[];
  token: string;
}
const acme: Tenant = { name: 'acme', word: 'zanzibarite', docs: [], token: '' };
const globex: Tenant = { name: 'globex', word: 'quetzalcoatlite', docs: [], token: '' };
let beforeDocs: string;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON, narrowed by each test
  body: any;
  text: string;
}

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const form = body instanceof FormData;
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}),
    },
    ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    text,
  };
}

async function upload(tenant: Tenant, n: number, metadata: Record<string, unknown>): Promise<string> {
  const form = new FormData();
  const text = `Aurora handbook ${n} for ${tenant.name}.\n\nThe aurora dashboard exports reports. ${tenant.word} appears here.\n`;
  form.append('file', new Blob([text], { type: 'text/markdown' }), `${tenant.name}-${n}.md`);
  form.append('metadata', JSON.stringify(metadata));
  const res = await call(apiA.url, writer, 'POST', '/api/v1/documents', form);
  expect(res.status).toBe(201);
  return res.body.document_id;
}

async function waitCompleted(id: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const { body } = await call(apiA.url, writer, 'GET', `/api/v1/documents/${id}`);
    if (body.status === 'completed') return;
    if (body.status === 'failed' || Date.now() > deadline) throw new Error(`document ${id}: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

function expectNothingOf(tenant: Tenant, shown: string, ids = true): void {
  if (ids) for (const id of tenant.docs) expect(shown).not.toContain(id);
  expect(shown).not.toContain(tenant.word);
  expect(shown).not.toContain(`${tenant.name}-`);
}

function expectProblem(res: Answer, status: number): void {
  expect(res.status).toBe(status);
  expect(res.body.status).toBe(status);
  expect(typeof res.body.type).toBe('string');
}

beforeAll(async () => {
  setup = distributedEnv();
  env = {
    ...setup.env,
    KB_TOKEN_SECRET: randomBytes(32).toString('hex'),
    KB_OPENSEARCH_DOCUMENTS_REFRESH_MS: '200',
    KB_OPENSEARCH_CHANGE_POLL_MS: '200',
  };
  const keyOf = (name: string, permissions: string) =>
    createKey(env, { workspace: 'tokens', name, permissions, plan: 'enterprise' });
  writer = (await keyOf('writer', 'read,search,write')).key;
  parent = await keyOf('parent', 'read,search');
  // One after the other: each start prepares the embedding model and the engines' indexes.
  apiA = await startChild(['serve', '--stages', 'all'], env, { timeoutMs: 300_000 });
  apiB = await startChild(['serve', '--stages', 'none'], env, { timeoutMs: 300_000 });
  beforeDocs = new Date().toISOString();
  for (const tenant of [acme, globex]) {
    tenant.docs.push(await upload(tenant, 1, { customer: tenant.name }));
    tenant.docs.push(await upload(tenant, 2, { customer: [tenant.name, 'shared'] }));
  }
  for (const id of [...acme.docs, ...globex.docs]) await waitCompleted(id);
  for (const tenant of [acme, globex]) {
    const res = await call(apiA.url, parent.key, 'POST', '/api/v1/tokens', {
      expires_in: 900,
      filters: { metadata: { customer: tenant.name } },
    });
    expect(res.status).toBe(201);
    tenant.token = res.body.token;
  }
}, 900_000);

afterAll(async () => {
  await Promise.all([apiA && stopChild(apiA), apiB && stopChild(apiB)]);
  await setup?.cleanup();
}, 120_000);

describe.each([acme, globex])('a $name token on another API process', (tenant) => {
  const them = () => (tenant === acme ? globex : acme);
  const on = (method: string, path: string, body?: unknown) => call(apiB.url, tenant.token, method, path, body);
  const search = (body: Record<string, unknown>) =>
    on('POST', '/api/v1/search', { query: 'aurora dashboard', limit: 50, ...body });

  it('searches in every mode, grouping and as_of only its own documents', async () => {
    for (const body of [
      { mode: 'hybrid' },
      { mode: 'semantic' },
      { mode: 'keyword' },
      { group_by: 'document' },
      { group_by: 'none', mode: 'keyword' },
      { as_of: new Date().toISOString(), mode: 'keyword' },
    ]) {
      const res = await search(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      const ids = new Set(res.body.results.map((r: { document_id: string }) => r.document_id));
      for (const id of tenant.docs) expect(ids).toContain(id);
      expectNothingOf(them(), res.text);
    }
    const past = await search({ as_of: beforeDocs, mode: 'keyword' });
    expect(past.body.results).toEqual([]);
  });

  it("cannot widen its rules with a request's filters", async () => {
    for (const filters of [
      { metadata: { customer: ['acme', 'globex'] } },
      { metadata: { customer: them().name } },
      { metadata: { customer: 'shared' } },
      { document_ids: them().docs },
    ]) {
      const res = await search({ filters, mode: 'keyword' });
      expect(res.status).toBe(200);
      expectNothingOf(them(), res.text);
    }
  });

  it("lists and reads its own documents; the other tenant's answer 404", async () => {
    const list = await on('GET', '/api/v1/documents?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.documents.map((d: { document_id: string }) => d.document_id).sort()).toEqual(
      [...tenant.docs].sort(),
    );
    expectNothingOf(them(), list.text);
    const own = tenant.docs[0] as string;
    const theirs = them().docs[0] as string;
    for (const path of ['', '/versions', '/versions/1']) {
      expect((await on('GET', `/api/v1/documents/${own}${path}`)).status).toBe(200);
      const res = await on('GET', `/api/v1/documents/${theirs}${path}`);
      expectProblem(res, 404);
      expectNothingOf(them(), res.text, false);
    }
    for (const path of ['', '/context']) {
      expect((await on('GET', `/api/v1/chunks/${own}${path}`)).status).toBe(200);
      expectProblem(await on('GET', `/api/v1/chunks/${theirs}${path}`), 404);
    }
  });

  it('reaches the MCP tools only within its rules', async () => {
    const res = await fetch(`${apiB.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { query: 'aurora' } } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_documents', arguments: {} } },
      ]),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(tenant.docs[0]);
    expectNothingOf(them(), text);
  });

  it('never writes', async () => {
    expectProblem(await on('DELETE', `/api/v1/documents/${tenant.docs[0]}`), 403);
    expectProblem(await on('PATCH', `/api/v1/documents/${tenant.docs[0]}`, { metadata: {} }), 403);
    expectProblem(await on('POST', '/api/v1/tokens', { expires_in: 60 }), 403);
  });
});

describe('refusals on the real engines', () => {
  it('refuses a tampered token with 401', async () => {
    const [header, payload, signature] = acme.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    claims.rules.filters = {};
    const widened = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    expectProblem(await call(apiB.url, widened, 'POST', '/api/v1/search', { query: 'aurora' }), 401);
  });

  it('ends the tokens of a revoked key on every process (401)', async () => {
    const key = await createKey(env, { workspace: 'tokens', name: 'short', permissions: 'search' });
    const minted = await call(apiA.url, key.key, 'POST', '/api/v1/tokens', { expires_in: 600 });
    expect(minted.status).toBe(201);
    expect((await call(apiB.url, minted.body.token, 'POST', '/api/v1/search', { query: 'aurora' })).status).toBe(200);
    await kb(['keys', 'revoke', key.id], env);
    // Each process trusts a looked-up key for KB_KEY_CACHE_MS (1 s here).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const api of [apiA, apiB]) {
      expectProblem(await call(api.url, minted.body.token, 'POST', '/api/v1/search', { query: 'aurora' }), 401);
    }
  });

  it('mints no token on a process without KB_TOKEN_SECRET, nor accepts one', async () => {
    const { KB_TOKEN_SECRET: _secret, ...withoutSecret } = env;
    const bare = await startChild(['serve', '--stages', 'none'], withoutSecret, { timeoutMs: 300_000 });
    try {
      const res = await call(bare.url, parent.key, 'POST', '/api/v1/tokens', { expires_in: 60 });
      expectProblem(res, 409);
      expect(res.body.detail).toContain('KB_TOKEN_SECRET');
      expectProblem(await call(bare.url, acme.token, 'POST', '/api/v1/search', { query: 'aurora' }), 401);
    } finally {
      await stopChild(bare);
    }
  }, 400_000);
});
