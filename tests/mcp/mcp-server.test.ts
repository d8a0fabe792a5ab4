import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KB_BIN, kbResult, REPO_ROOT } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * The MCP server as an assistant meets it, through the SDK's own client: over Streamable HTTP at
 * /mcp with an API key, and over stdio from `kb mcp`. Two documents in one workspace (one with a
 * second version), one in another workspace.
 */
let svc: TestService;
let notes: string;
let guide: string;
let foreign: string;
let beforeV2: string;
const clients: Client[] = [];

const V1 = '# Release notes\n\nThe aurora dashboard now exports reports as PDF.\n';
const V2 = '# Release notes\n\nThe aurora dashboard now exports reports as PDF and CSV.\n';

async function httpClient(key: string | null): Promise<Client> {
  const client = new Client({ name: 'kb-test', version: '1.0.0' });
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return { isError: result.isError === true, text };
}

const cite = (name: string, id: string, version: number, chunk?: number) =>
  `[${[name, `document ${id}`, `version ${version}`, ...(chunk === undefined ? [] : [`chunk ${chunk}`])].join(' · ')}]`;

beforeAll(async () => {
  svc = await startTestService();
  const up = async (name: string, content: string, key = svc.keys.all, metadata: object = { team: 'docs' }) => {
    const res = await svc.upload(name, content, { key, metadata, type: 'text/markdown' });
    expect(res.status).toBe(201);
    await svc.waitForStatus(res.body.document_id, 'completed', { key });
    return res.body.document_id as string;
  };
  notes = await up('notes.md', V1);
  guide = await up('guide.md', '# Glacier guide\n\nCrampons grip blue ice on the glacier tongue.\n', svc.keys.all, {
    team: 'field',
  });
  foreign = await up('secret.md', '# Secret\n\nThe aurora dashboard of the other team.\n', svc.keys.otherWorkspace);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  beforeV2 = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const put = await svc.upload('notes.md', V2, { documentId: notes, changeReason: 'adds CSV export' });
  expect(put.status).toBe(200);
  await svc.waitForStatus(notes, 'completed');
  const history = await svc.request('GET', `/api/v1/documents/${notes}/versions`);
  expect(history.body.versions[0].status).toBe('completed');
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await svc?.close();
});

describe('MCP over Streamable HTTP at /mcp', () => {
  it('lists the six tools, each with a description and an input schema', async () => {
    const client = await httpClient(svc.keys.all);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'compare_versions',
      'get_chunks',
      'get_document',
      'list_documents',
      'list_versions',
      'search',
    ]);
    const search = tools.find((t) => t.name === 'search');
    expect(Object.keys(search?.inputSchema.properties ?? {}).sort()).toEqual([
      'as_of',
      'filters',
      'limit',
      'mode',
      'query',
    ]);
    expect(search?.inputSchema.required).toEqual(['query']);
  });

  it('search answers passages with citations: document name, id, version and chunk', async () => {
    const client = await httpClient(svc.keys.all);
    const now = await call(client, 'search', { query: 'export dashboard reports', limit: 3 });
    expect(now.isError).toBe(false);
    expect(now.text).toContain(`1. ${cite('notes.md', notes, 2, 0)}`);
    expect(now.text).toContain('exports reports as PDF and CSV.');
    expect(now.text).not.toContain('secret.md');

    const past = await call(client, 'search', { query: 'export dashboard reports', as_of: beforeV2, mode: 'keyword' });
    expect(past.text).toContain('(keyword search, the knowledge base as of');
    expect(past.text).toContain(cite('notes.md', notes, 1, 0));
    expect(past.text).toContain('exports reports as PDF.');
    expect(past.text).not.toContain('PDF and CSV');

    const filtered = await call(client, 'search', {
      query: 'glacier ice',
      mode: 'semantic',
      filters: { metadata: { team: 'field' } },
    });
    expect(filtered.text).toContain(cite('guide.md', guide, 1, 0));
    expect(filtered.text).not.toContain('notes.md');
  });

  it('refuses arguments the tool does not take, naming the field', async () => {
    const client = await httpClient(svc.keys.all);
    const bad = await call(client, 'search', { query: 'x', limit: 500 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/limit/);

    // Every tool's schema is closed, and an argument it does not take is refused, not dropped.
    const { tools } = await client.listTools();
    for (const tool of tools) expect([tool.name, tool.inputSchema.additionalProperties]).toEqual([tool.name, false]);
    const valid: Record<string, Record<string, unknown>> = {
      search: { query: 'aurora' },
      get_document: { document_id: notes },
      get_chunks: { document_id: notes },
      list_documents: {},
      list_versions: { document_id: notes },
      compare_versions: { document_id: notes, from: 1, to: 2 },
    };
    for (const [name, args] of Object.entries(valid)) {
      expect((await call(client, name, args)).isError).toBe(false);
      const refused = await call(client, name, { ...args, workspace_id: 'someone-else' });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain('-32602');
      expect(refused.text).toContain(`Invalid arguments for tool ${name}`);
      expect(refused.text).toContain('Unrecognized key: "workspace_id"');
    }
    // A misspelt filter would otherwise widen the search to every document.
    const misspelt = await call(client, 'search', { query: 'aurora', filters: { document_id: [guide] } });
    expect(misspelt.isError).toBe(true);
    expect(misspelt.text).toContain('Unrecognized key: "document_id"');
  });

  it('get_document, get_chunks, list_documents, list_versions and compare_versions read the workspace', async () => {
    const client = await httpClient(svc.keys.read);
    const doc = await call(client, 'get_document', { document_id: notes });
    expect(doc.text).toContain(`notes.md ${cite('notes.md', notes, 2)}`);
    expect(doc.text).toContain('status: completed; latest version 2; served version 2');
    expect(doc.text).toContain('metadata: {"team":"docs"}');
    expect(doc.text).toContain('The aurora dashboard now exports reports as PDF and CSV.');

    const chunks = await call(client, 'get_chunks', { document_id: notes, version: 1 });
    expect(chunks.text).toContain('1 chunk of version 1 of notes.md');
    expect(chunks.text).toContain(
      `${cite('notes.md', notes, 1, 0)}\nRelease notes\n\nThe aurora dashboard now exports reports as PDF.`,
    );

    const list = await call(client, 'list_documents', { limit: 1 });
    expect(list.text).toContain('1 document of 2 in the workspace');
    expect(list.text).toContain(`- guide.md ${cite('guide.md', guide, 1)} completed`);
    expect(list.text).toMatch(/More: call again with cursor "[^"]+"/);
    const cursor = /cursor "([^"]+)"/.exec(list.text)?.[1];
    const page2 = await call(client, 'list_documents', { limit: 1, cursor });
    expect(page2.text).toContain(`- notes.md ${cite('notes.md', notes, 2)} completed`);
    expect(page2.text).not.toContain('More:');

    const versions = await call(client, 'list_versions', { document_id: notes });
    expect(versions.text).toContain('2 versions of notes.md');
    expect(versions.text).toContain(`- ${cite('notes.md', notes, 2)} completed`);
    expect(versions.text).toContain('reason: adds CSV export');

    const diff = await call(client, 'compare_versions', { document_id: notes, from: 1, to: 2 });
    expect(diff.text).toContain('version 1 → 2: 0 added, 0 removed, 1 modified, 0 unchanged chunks.');
    expect(diff.text).toContain(`~ modified ${cite('notes.md', notes, 1, 0)} → ${cite('notes.md', notes, 2, 0)}`);
    expect(diff.text).toContain('after:\nRelease notes\n\nThe aurora dashboard now exports reports as PDF and CSV.');
  });

  it('checks the permission of each tool: search needs `search`, reading needs `read`', async () => {
    const reader = await httpClient(svc.keys.read);
    const refused = await call(reader, 'search', { query: 'aurora' });
    expect(refused).toEqual({ isError: true, text: "forbidden: This API key lacks the 'search' permission." });

    const searcher = await httpClient(svc.keys.search);
    expect((await call(searcher, 'search', { query: 'aurora' })).isError).toBe(false);
    for (const [tool, args] of [
      ['get_document', { document_id: notes }],
      ['list_documents', {}],
      ['list_versions', { document_id: notes }],
    ] as const) {
      expect(await call(searcher, tool, args), tool).toEqual({
        isError: true,
        text: "forbidden: This API key lacks the 'read' permission.",
      });
    }
  });

  it("keeps workspaces apart: another workspace's documents are not found and never searched", async () => {
    const other = await httpClient(svc.keys.otherWorkspace);
    const doc = await call(other, 'get_document', { document_id: notes });
    expect(doc.isError).toBe(true);
    expect(doc.text).toMatch(/^not-found: /);
    expect((await call(other, 'compare_versions', { document_id: notes, from: 1, to: 2 })).text).toMatch(/^not-found/);
    const found = await call(other, 'search', { query: 'aurora dashboard reports' });
    expect(found.text).toContain(cite('secret.md', foreign, 1, 0));
    expect(found.text).not.toContain(notes);
    const list = await call(other, 'list_documents', {});
    expect(list.text).toContain('1 document of 1 in the workspace');
  });

  it('refuses a missing or revoked key with 401 before any tool, and counts requests against the rate limit', async () => {
    await expect(httpClient(null)).rejects.toThrow(/401/);
    await expect(httpClient('ink_not_a_key')).rejects.toThrow(/401/);

    const initialize = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: {
        'x-api-key': svc.keys.all,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
      }),
    });
    expect(initialize.status).toBe(200);
    expect(initialize.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(initialize.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await initialize.json()) as { result: { serverInfo: { name: string } } };
    expect(body.result.serverInfo.name).toBe('kb-document-service');

    const get = await fetch(`${svc.url}/mcp`, { headers: { 'x-api-key': svc.keys.all } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('counts every call of a JSON-RPC batch against the rate limit: a batch larger than what is left is a 429, and none of it runs', async () => {
    // The starter plan: 100 requests a minute.
    const { key } = await svc.createKey({ permissions: ['read', 'search'], plan: 'starter' });
    const post = (body: unknown) =>
      fetch(`${svc.url}/mcp`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
    const calls = (n: number, name: string, args: Record<string, unknown>) =>
      Array.from({ length: n }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }));

    const one = await post(calls(1, 'list_documents', {})[0]);
    expect(one.status).toBe(200);
    expect(one.headers.get('x-ratelimit-remaining')).toBe('99');
    await one.arrayBuffer();

    // 100 searches in one POST: 100 requests, one more than the 99 left.
    const batch = await post(calls(100, 'search', { query: 'aurora dashboard', mode: 'keyword' }));
    expect(batch.status).toBe(429);
    expect(batch.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(batch.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(batch.headers.get('x-ratelimit-remaining')).toBe('99');
    const problem = (await batch.json()) as { detail: string; error: { code: string } };
    expect(problem.error.code).toBe('rate_limit_exceeded');
    expect(problem.detail).toContain('100 calls');
    expect(problem.detail).toContain('only 99');

    // Nothing of the refused batch was counted: 99 calls still fit, exactly, and then nothing does.
    const fits = await post(calls(99, 'list_documents', { limit: 1 }));
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-ratelimit-remaining')).toBe('0');
    const answers = (await fits.json()) as { id: number; result?: { isError?: boolean } }[];
    expect(answers).toHaveLength(99);
    expect(answers.every((a) => a.result !== undefined && a.result.isError !== true)).toBe(true);
    const over = await post(calls(1, 'list_documents', {})[0]);
    expect(over.status).toBe(429);
    await over.arrayBuffer();
  });
});

describe('kb mcp (stdio)', () => {
  const stdioClient = async (key: string) => {
    const client = new Client({ name: 'kb-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [KB_BIN, 'mcp'],
      cwd: REPO_ROOT,
      env: {
        ...(process.env as Record<string, string>),
        KB_DATA_DIR: svc.dataDir,
        KB_API_KEY: key,
        KB_KEY: '',
        KB_LOG_LEVEL: 'silent',
        KB_OCR: 'false',
        KB_PARSE_THREADS: '1',
        KB_KEY_CACHE_MS: '0',
      },
      stderr: 'pipe',
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  it('serves the same tools over stdio as the key given in KB_API_KEY', async () => {
    const client = await stdioClient(svc.keys.all);
    expect((await client.listTools()).tools).toHaveLength(6);
    const found = await call(client, 'search', { query: 'export dashboard reports', mode: 'keyword' });
    expect(found.text).toContain(`1. ${cite('notes.md', notes, 2, 0)}`);
    expect(found.text).not.toContain('secret.md');
    const versions = await call(client, 'list_versions', { document_id: notes });
    expect(versions.text).toContain('2 versions of notes.md');

    const reader = await stdioClient(svc.keys.read);
    expect(await call(reader, 'search', { query: 'aurora' })).toEqual({
      isError: true,
      text: "forbidden: This API key lacks the 'search' permission.",
    });
  }, 120_000);

  it('serves a scoped token within its rules', async () => {
    const minted = await svc.request('POST', '/api/v1/tokens', {
      json: { expires_in: 600, filters: { metadata: { team: 'field' } } },
    });
    expect(minted.status).toBe(201);
    const client = await stdioClient(minted.body.token);
    const found = await call(client, 'search', { query: 'glacier aurora dashboard', mode: 'keyword' });
    expect(found.text).toContain(cite('guide.md', guide, 1, 0));
    expect(found.text).not.toContain('notes.md');
    expect((await call(client, 'get_document', { document_id: notes })).isError).toBe(true);
  }, 120_000);

  it('refuses to start without a key (exit 2) or with an unknown one (exit 1)', async () => {
    const env = { KB_DATA_DIR: svc.dataDir, KB_API_KEY: '', KB_KEY: '', KB_LOG_LEVEL: 'silent' };
    const none = await kbResult(['mcp'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('kb mcp needs an API key: --key ink_…, KB_API_KEY or KB_KEY.');
    const unknown = await kbResult(['mcp', '--key', 'ink_unknown'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('kb mcp: the API key is invalid or has been revoked.');
    expect(unknown.stdout).toBe('');
  }, 120_000);
});
