import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStreamClient, openEventStream } from '../support/event-stream-client.ts';
import { type ApiResponse, expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/**
 * Two tenants' scoped tokens minted from one key, every read and search path tried with each:
 * nothing of the other tenant shows anywhere, and every refusal is the documented problem.
 */
let svc: TestService;
let parent: { key: string; id: string };

interface Tenant {
  readonly name: 'acme' | 'globex';
  /** A word only this tenant's documents hold. */
  readonly word: string;
  docs: string[];
  /** A document whose latest version belongs to the other tenant; version 1 is this tenant's. */
  moved?: string;
  token: string;
  events?: EventStreamClient;
}
const acme: Tenant = { name: 'acme', word: 'zanzibarite', docs: [], token: '' };
const globex: Tenant = { name: 'globex', word: 'quetzalcoatlite', docs: [], token: '' };
const other = (t: Tenant) => (t === acme ? globex : acme);
let beforeMove: string;

const text = (tenant: Tenant, n: number) =>
  `Aurora handbook ${n} for ${tenant.name}.\n\nThe aurora dashboard exports reports. ${tenant.word} appears in every ${tenant.name} page.\n`;

async function upload(tenant: Tenant, n: number, metadata: Record<string, unknown>, source = 'upload') {
  const res = await svc.upload(`${tenant.name}-${n}.md`, text(tenant, n), {
    metadata,
    type: 'text/markdown',
    source,
  });
  expect(res.status).toBe(201);
  await svc.waitForStatus(res.body.document_id, 'completed');
  return res.body.document_id as string;
}

// biome-ignore lint/suspicious/noExplicitAny: the parsed JSON of the token endpoint, narrowed by each test
async function mint(body: unknown, key = parent.key): Promise<ApiResponse<any>> {
  return svc.request('POST', '/api/v1/tokens', { key, json: body });
}

/**
 * Whatever a response shows must hold nothing of the other tenant (a refusal may name the id the
 * caller asked for: `ids: false`).
 */
function expectNothingOf(tenant: Tenant, res: ApiResponse | string, ids = true): void {
  const shown = typeof res === 'string' ? res : res.text;
  if (ids) for (const id of tenant.docs) expect(shown).not.toContain(id);
  expect(shown).not.toContain(tenant.word);
  expect(shown).not.toContain(`${tenant.name}-`);
}

async function mcp(token: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  svc = await startTestService({ stages: 'all' });
  for (const tenant of [acme, globex]) {
    tenant.docs.push(await upload(tenant, 1, { customer: tenant.name, status: 'published' }));
    tenant.docs.push(await upload(tenant, 2, { customer: [tenant.name, 'shared'], status: 'published' }, 'crm'));
  }
  // A document first acme's, then moved to globex by a metadata change (its latest version).
  const movedUp = await svc.upload(
    'moved.md',
    'Aurora handbook for whoever owns it.\n\nThe aurora dashboard moves.\n',
    {
      metadata: { customer: 'acme', status: 'published' },
      type: 'text/markdown',
    },
  );
  const moved = movedUp.body.document_id as string;
  await svc.waitForStatus(moved, 'completed');
  await new Promise((r) => setTimeout(r, 20));
  beforeMove = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  const patch = await svc.request('PATCH', `/api/v1/documents/${moved}`, {
    json: { metadata: { customer: 'globex', status: 'published' } },
  });
  expect(patch.status).toBe(200);
  await svc.waitForStatus(moved, 'completed');
  acme.moved = moved;

  parent = await svc.createKey({ permissions: ['read', 'search'] });
  for (const tenant of [acme, globex]) {
    const res = await mint({ expires_in: 600, filters: { metadata: { customer: tenant.name } } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      token_type: 'Bearer',
      parent_key_id: parent.id,
      permissions: ['read', 'search'],
      filters: { metadata: { customer: [tenant.name] } },
      sources: null,
    });
    tenant.token = res.body.token;
  }
}, 120_000);

afterAll(async () => {
  acme.events?.close();
  globex.events?.close();
  await svc?.close();
});

describe.each([acme, globex])('a $name token', (tenant) => {
  const them = () => other(tenant);
  const get = (path: string) => svc.request('GET', path, { key: tenant.token });
  const search = (body: Record<string, unknown>) =>
    svc.request('POST', '/api/v1/search', { key: tenant.token, json: { query: 'aurora dashboard', ...body } });
  const own = () => tenant.docs[0] as string;
  const theirs = () => them().docs[0] as string;

  it('opens the event stream (checked at the end)', async () => {
    tenant.events = await openEventStream(svc.url, tenant.token);
    expect(tenant.events.status).toBe(200);
  });

  it.each(['hybrid', 'semantic', 'keyword'])('searches in %s mode only its own documents', async (mode) => {
    const res = await search({ mode, limit: 50 });
    expect(res.status).toBe(200);
    const ids = new Set(res.body.results.map((r: { document_id: string }) => r.document_id));
    for (const id of tenant.docs) expect(ids).toContain(id);
    expectNothingOf(them(), res);
  });

  it.each(['document', 'none', 'passage'])('groups by %s within its rules', async (groupBy) => {
    const res = await search({ group_by: groupBy, limit: 50 });
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBeGreaterThan(0);
    expectNothingOf(them(), res);
  });

  it('searches as of a past instant within its rules', async () => {
    const res = await search({ as_of: beforeMove, limit: 50, mode: 'keyword' });
    expect(res.status).toBe(200);
    const ids = res.body.results.map((r: { document_id: string }) => r.document_id);
    // Before the move, the moved document was acme's.
    expect(ids.includes(acme.moved)).toBe(tenant === acme);
    expectNothingOf(them(), res);
  });

  it("cannot widen its rules with a request's filters", async () => {
    const widen = [
      { metadata: { customer: ['acme', 'globex'] } },
      { metadata: { customer: them().name } },
      { document_ids: them().docs },
      { metadata: { status: 'published' } },
      { metadata: { customer: 'shared' } },
    ];
    for (const filters of widen) {
      const res = await search({ filters, limit: 50, mode: 'keyword' });
      expect(res.status).toBe(200);
      expectNothingOf(them(), res);
    }
    const narrowed = await search({ filters: { document_ids: [own()] }, mode: 'keyword' });
    expect(new Set(narrowed.body.results.map((r: { document_id: string }) => r.document_id))).toEqual(new Set([own()]));
    const theirWord = await search({ query: them().word, mode: 'keyword' });
    expect(theirWord.body.results).toEqual([]);
  });

  it('lists only its own documents, by cursor and by page', async () => {
    const cursor = await get('/api/v1/documents?limit=100');
    expect(cursor.status).toBe(200);
    const ids = cursor.body.documents.map((d: { document_id: string }) => d.document_id).sort();
    const expected = [...tenant.docs, ...(tenant === globex ? [acme.moved] : [])].sort();
    expect(ids).toEqual(expected);
    expect(cursor.body.pagination.total).toBe(expected.length);
    expectNothingOf(them(), cursor);

    const first = await get('/api/v1/documents?limit=1');
    const next = await get(`/api/v1/documents?limit=100&cursor=${first.body.pagination.next_cursor}`);
    expect([...first.body.documents, ...next.body.documents].length).toBe(expected.length);
    expectNothingOf(them(), next);

    const page = await get('/api/v1/documents?page=1&page_size=100');
    expect(page.body.total).toBe(expected.length);
    expectNothingOf(them(), page);
    const bySource = await get('/api/v1/documents?source=crm');
    expect(bySource.body.documents.map((d: { document_id: string }) => d.document_id)).toEqual([tenant.docs[1]]);
  });

  it('reads its own documents, versions, chunks, context and diffs', async () => {
    for (const path of [
      `/api/v1/documents/${own()}`,
      `/api/v1/documents/${own()}/versions`,
      `/api/v1/documents/${own()}/versions/1`,
      `/api/v1/chunks/${own()}`,
      `/api/v1/chunks/${own()}?version=1`,
      `/api/v1/chunks/${own()}/context`,
      `/v1/documents/${own()}`,
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expectNothingOf(them(), res);
    }
    const chunks = await get(`/api/v1/chunks/${own()}`);
    const chunkId = chunks.body.chunks[0].id;
    const context = await get(`/api/v1/chunks/${own()}/context?chunk_id=${encodeURIComponent(chunkId)}`);
    expect(context.status).toBe(200);
  });

  it("answers 404 for every read of the other tenant's documents, as for another workspace's", async () => {
    const theirChunk = (await svc.request('GET', `/api/v1/chunks/${theirs()}`, { key: svc.keys.all })).body.chunks[0]
      .id;
    for (const path of [
      `/api/v1/documents/${theirs()}`,
      `/api/v1/documents/${theirs()}/versions`,
      `/api/v1/documents/${theirs()}/versions/1`,
      `/api/v1/chunks/${theirs()}`,
      `/api/v1/chunks/${theirs()}?version=1`,
      `/api/v1/chunks/${theirs()}/context`,
      `/api/v1/chunks/${theirs()}/context?chunk_id=${encodeURIComponent(theirChunk)}`,
      `/api/v1/chunks/${own()}/context?chunk_id=${encodeURIComponent(theirChunk)}`,
      `/v1/documents/${theirs()}`,
      `/api/v1/documents/${randomUUID()}`,
    ]) {
      const res = await get(path);
      expectProblem(res, 404, 'not-found');
      expectNothingOf(them(), res, false);
    }
  });

  it('sees each version of a moved document by its own rules', async () => {
    const moved = acme.moved as string;
    const versions = await get(`/api/v1/documents/${moved}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual(tenant === acme ? [1] : [2]);
    expect((await get(`/api/v1/documents/${moved}`)).status).toBe(tenant === acme ? 404 : 200);
    expect((await get(`/api/v1/documents/${moved}/versions/1`)).status).toBe(tenant === acme ? 200 : 404);
    expect((await get(`/api/v1/documents/${moved}/versions/2`)).status).toBe(tenant === acme ? 404 : 200);
    expectProblem(await get(`/api/v1/documents/${moved}/versions/compare?from=1&to=2`), 404, 'not-found');
  });

  it('reaches the MCP tools only within its rules', async () => {
    const found = await mcp(tenant.token, 'search', { query: 'aurora dashboard', limit: 50 });
    expect(found.status).toBe(200);
    for (const id of tenant.docs) expect(found.text).toContain(id);
    expectNothingOf(them(), found.text);
    const widened = await mcp(tenant.token, 'search', {
      query: 'aurora',
      filters: { metadata: { customer: them().name } },
    });
    expectNothingOf(them(), widened.text);
    const list = await mcp(tenant.token, 'list_documents', { limit: 100 });
    expect(list.text).toContain(own());
    expectNothingOf(them(), list.text);
    for (const [tool, args] of [
      ['get_document', { document_id: theirs() }],
      ['get_chunks', { document_id: theirs() }],
      ['list_versions', { document_id: theirs() }],
      ['compare_versions', { document_id: theirs(), from: 1, to: 1 }],
    ] as const) {
      const res = await mcp(tenant.token, tool, args);
      expect(res.status).toBe(200);
      expect(res.text).toContain('"isError":true');
      expect(res.text).toMatch(/not found/i);
      expectNothingOf(them(), res.text, false);
    }
    const mine = await mcp(tenant.token, 'get_document', { document_id: own() });
    expect(mine.text).toContain(tenant.word);
  });

  it('never writes, and reaches no endpoint but reads and search', async () => {
    const writes: Array<[string, string, Record<string, unknown>]> = [
      ['PATCH', `/api/v1/documents/${own()}`, { json: { metadata: { customer: them().name } } }],
      ['DELETE', `/api/v1/documents/${own()}`, {}],
      ['POST', `/api/v1/documents/${own()}/rollback`, { json: { version: 1 } }],
      ['POST', '/api/v1/tokens', { json: { expires_in: 60 } }],
      ['GET', '/api/v1/audit-logs', {}],
      ['GET', '/api/v1/sources', {}],
      ['GET', '/api/v1/webhooks', {}],
    ];
    for (const [method, path, opts] of writes) {
      expectProblem(await svc.request(method, path, { key: tenant.token, ...opts }), 403, 'forbidden');
    }
    const upload = await svc.upload('x.md', 'text', { key: tenant.token });
    expectProblem(upload, 403, 'forbidden');
    expect((await get(`/api/v1/documents/${own()}`)).body.metadata.customer).not.toBe(them().name);
  });
});

describe('refusals', () => {
  const doc = () => acme.docs[0] as string;

  it('refuses a tampered token, or one signed with another secret, with 401', async () => {
    const [header, payload, signature] = acme.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    claims.rules.filters = {};
    const widened = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    const flipped = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'AB' : 'AA'}`;
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    for (const token of [widened, flipped, `${none}x`, 'eyJ.eyJ.x']) {
      const res = await svc.request('GET', `/api/v1/documents/${doc()}`, { key: token });
      expectProblem(res, 401, 'unauthorized');
    }
    const search = await svc.request('POST', '/api/v1/search', { key: widened, json: { query: 'aurora' } });
    expectProblem(search, 401, 'unauthorized');
  });

  it('refuses a token past its expiry with 401', async () => {
    const res = await mint({ expires_in: 2, filters: { metadata: { customer: 'acme' } } });
    expect(res.status).toBe(201);
    expect((await svc.request('GET', `/api/v1/documents/${doc()}`, { key: res.body.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(res.body.expires_at) - Date.now() + 100));
    expectProblem(await svc.request('GET', `/api/v1/documents/${doc()}`, { key: res.body.token }), 401, 'unauthorized');
  });

  it('ends every token of a revoked key (401), over HTTP and MCP', async () => {
    const key = await svc.createKey({ permissions: ['search'] });
    const res = await mint({ expires_in: 600 }, key.key);
    expect(res.body.permissions).toEqual(['search']);
    const token = res.body.token;
    const searchBody = { json: { query: 'aurora' } };
    expect((await svc.request('POST', '/api/v1/search', { key: token, ...searchBody })).status).toBe(200);
    // A search-only token cannot read.
    expectProblem(await svc.request('GET', `/api/v1/documents/${doc()}`, { key: token }), 403, 'forbidden');
    const revoke = await svc.runtime.services.keys.revoke(key.id);
    expect(revoke).toBe(true);
    expectProblem(await svc.request('POST', '/api/v1/search', { key: token, ...searchBody }), 401, 'unauthorized');
    const viaMcp = await mcp(token, 'search', { query: 'aurora' });
    expect(viaMcp.status).toBe(401);
  });

  it('mints nothing wider than the key, nor past the bound, nor with empty rules', async () => {
    const searchOnly = await svc.createKey({ permissions: ['search'] });
    expectProblem(await mint({ expires_in: 60, permissions: ['read'] }, searchOnly.key), 403, 'forbidden');
    expectProblem(await mint({ expires_in: 60, permissions: ['write'] }), 422, 'validation-error');
    expectProblem(await mint({ expires_in: 10 * 86400 }), 422, 'validation-error');
    expectProblem(await mint({}), 422, 'validation-error');
    expectProblem(await mint({ expires_in: 60, filters: { document_ids: [] } }), 422, 'validation-error');
    const writeOnly = await svc.createKey({ permissions: ['write'] });
    expectProblem(await mint({ expires_in: 60 }, writeOnly.key), 403, 'forbidden');
  });

  it('counts against the parent key and keeps its workspace', async () => {
    const res = await svc.request('GET', `/api/v1/documents/${doc()}`, { key: acme.token });
    const viaKey = await svc.request('GET', `/api/v1/documents/${doc()}`, { key: parent.key });
    expect(Number(viaKey.headers.get('x-ratelimit-remaining'))).toBe(
      Number(res.headers.get('x-ratelimit-remaining')) - 1,
    );
    const otherWorkspace = await svc.request('GET', `/api/v1/documents/${doc()}`, { key: svc.keys.otherWorkspace });
    expectProblem(otherWorkspace, 404, 'not-found');
  });

  it('narrows to sources as well', async () => {
    const res = await mint({ expires_in: 600, sources: ['crm'] });
    const token = res.body.token;
    const list = await svc.request('GET', '/api/v1/documents', { key: token });
    expect(list.body.documents.map((d: { document_id: string }) => d.document_id).sort()).toEqual(
      [acme.docs[1], globex.docs[1]].sort(),
    );
    const found = await svc.request('POST', '/api/v1/search', {
      key: token,
      json: { query: 'aurora dashboard', mode: 'keyword', limit: 50 },
    });
    expect(new Set(found.body.results.map((r: { document_id: string }) => r.document_id))).toEqual(
      new Set([acme.docs[1], globex.docs[1]]),
    );
    expectProblem(await svc.request('GET', `/api/v1/documents/${acme.docs[0]}`, { key: token }), 404, 'not-found');
  });

  it("streams only the events of each token's documents", async () => {
    for (const tenant of [acme, globex]) {
      await svc.upload(`${tenant.name}-late.md`, text(tenant, 9), { metadata: { customer: tenant.name } });
    }
    await svc.request('DELETE', `/api/v1/documents/${globex.docs[0]}`);
    for (const tenant of [acme, globex]) {
      const stream = tenant.events as EventStreamClient;
      await stream.waitFor((events) => events.some((e) => e.data.type === 'document.version.completed'), 20_000);
    }
    await globex.events?.waitFor((events) => events.some((e) => e.data.type === 'document.deleted'), 20_000);
    // The other tenant's events had their turn: acme's stream still holds only acme's.
    await new Promise((r) => setTimeout(r, 500));
    for (const tenant of [acme, globex]) {
      const events = (tenant.events as EventStreamClient).events;
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        expect(event.data.data.name).toMatch(new RegExp(`^${tenant.name}-`));
        expectNothingOf(other(tenant), JSON.stringify(event));
      }
    }
  });
});
