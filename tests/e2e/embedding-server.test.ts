import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../core/runtime/runtime.ts';
import { createKey, startChild, stopChild, tempDir, waitForDocument } from '../../support/child-service.ts';
import { type OpenAiEmbeddingsFake, startOpenAiEmbeddingsFake } from '../../support/openai-embeddings-fake.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { testConfig } from '../support/test-client.ts';

/** `kb serve` with an embedding server (KB_EMBEDDING_PROVIDER=openai): ingestion and search through it, and what stops its start. */
describe('kb serve with an OpenAI-compatible embedding server', { timeout: 240_000 }, () => {
  const cleanups = cleanupsAfterAll();
  let server: OpenAiEmbeddingsFake;

  beforeAll(async () => {
    server = await startOpenAiEmbeddingsFake({ dimensions: 384, model: 'bge-small' });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function dataDir(): Promise<string> {
    const dir = await tempDir('kb-embedding-server-');
    cleanups.push(dir.remove);
    return path.join(dir.path, 'data');
  }

  const envFor = (data: string, url: string): Record<string, string> => ({
    KB_DATA_DIR: data,
    KB_BOOTSTRAP_KEY: 'false',
    KB_BOOTSTRAP_ACCOUNT: 'false',
    KB_EMBEDDING_PROVIDER: 'openai',
    KB_EMBEDDING_URL: url,
    KB_EMBEDDING_MODEL: 'bge-small',
    KB_OUTBOUND_ALLOW_PRIVATE: 'true',
    KB_EMBEDDING_BATCH_SIZE: '8',
  });

  /** Runs `kb serve` expecting it to stop at start; its exit status and output. */
  async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const child = await startChild(['serve'], env, { waitForHttp: false });
    cleanups.push(() => stopChild(child));
    const timeout = new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 120_000).unref());
    const code = await Promise.race([child.exited, timeout]);
    return { code: code === 'running' ? null : code, output: child.output() };
  }

  it('embeds uploaded documents through the server and answers a semantic search with them', async () => {
    const data = await dataDir();
    const env = envFor(data, server.url);
    const { key } = await createKey(env, { workspace: 'w', name: 'k', permissions: 'read,search,write' });
    const service = await startChild(['serve'], env);
    cleanups.push(() => stopChild(service));
    const form = new FormData();
    form.append('file', new Blob(['Aardvarks dig burrows at night and feed on termites.']), 'aardvark.txt');
    const upload = await fetch(`${service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': key },
      body: form,
    });
    expect(upload.status).toBe(201);
    const { document_id } = (await upload.json()) as { document_id: string };
    await waitForDocument(service.url, key, document_id);
    const response = await fetch(`${service.url}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'aardvarks termites', mode: 'semantic' }),
    });
    const body = (await response.json()) as { results: Array<{ document_id: string }>; warnings?: string[] };
    expect(response.status).toBe(200);
    expect(body.results[0]?.document_id).toBe(document_id);
    expect(body.warnings).toBeUndefined();
    expect(server.violations).toEqual([]);
    expect(server.answered.texts).toBeGreaterThanOrEqual(3);
  });

  it('stops at start when the index holds vectors of the same model name at another size', async () => {
    const data = await dataDir();
    const runtime = await createRuntime(testConfig(data), { stages: 'none' });
    await runtime.ports.documents.setIndexModel({ model: 'openai/bge-small', dimensions: 768 });
    await runtime.close();
    const { code, output } = await failedStart(envFor(data, server.url));
    expect(code).toBe(1);
    expect(output).toContain('The index holds 768-dimensional vectors of openai/bge-small');
    expect(output).toContain('now answers 384-dimensional vectors for the same model name');
    expect(output).toContain('kb reindex');
  });

  it('stops at start when the outbound rules refuse the server, saying which setting opens it', async () => {
    const env = { ...envFor(await dataDir(), server.url), KB_OUTBOUND_ALLOW_PRIVATE: 'false' };
    const { code, output } = await failedStart(env);
    expect(code).toBe(1);
    expect(output).toContain('KB_OUTBOUND_ALLOW_PRIVATE=true');
  });

  it('starts anyway when the server does not answer yet, saying so', async () => {
    const gone = await startOpenAiEmbeddingsFake({ model: 'bge-small' });
    await gone.close();
    const service = await startChild(['serve', '--stages', 'none'], envFor(await dataDir(), gone.url), {
      timeoutMs: 180_000,
    });
    cleanups.push(() => stopChild(service));
    expect(service.output()).toMatch(
      /Warning: the embedding server at http:\/\/127\.0\.0\.1:\d+\/v1 does not answer yet/,
    );
  });
});
