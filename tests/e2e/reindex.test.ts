import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunksView, DocumentView, SearchView } from '../../core/model/response-views.model.ts';
import { KB_BIN, REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { type CohereFake, startCohereFake } from '../../support/cohere-fake.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/**
 * `kb reindex` moves a knowledge base built with the `local` provider to Cohere (a loopback fake):
 * every chunk gets a vector of the new model and semantic search embeds queries with it. Until
 * then the store refuses to mix models, and says how to get out of it.
 */

const run = promisify(execFile);

const DOCS = {
  glaciers:
    '# Glaciers\n\nGlaciers carve valleys as the ice moves downhill. Meltwater from the glacier feeds ' +
    'the alpine lakes every summer, and moraines mark where the ice once stood.\n',
  volcanoes:
    '# Volcanoes\n\nA volcano erupts when magma rises through the crust. Lava flows and ash clouds ' +
    'reshape the island, and the crater lake fills after the eruption ends.\n',
  bakery:
    'The bakery opens at six. Sourdough loaves, rye rolls and cinnamon buns come out of the oven ' +
    'before the first customers arrive.\n',
};

let cohere: CohereFake;
let data: { path: string; remove(): Promise<void> };
let workspaceId = '';
const ids: Record<string, string> = {};
let localModel = '';
const open: TestService[] = [];

const cohereEnv = (): Record<string, string> => ({
  KB_EMBEDDING_PROVIDER: 'cohere',
  KB_COHERE_API_KEY: 'test',
  KB_COHERE_BASE_URL: cohere.url,
});

/** A service on the shared data directory, with a key of the original workspace. */
async function serviceOnData(env: Record<string, string> = {}): Promise<{ svc: TestService; key: string }> {
  const svc = await startTestService({ dataDir: data.path, env });
  open.push(svc);
  const { key } = await svc.createKey({ permissions: ['read', 'search', 'write'], workspaceId });
  return { svc, key };
}

async function closeService(svc: TestService): Promise<void> {
  open.splice(open.indexOf(svc), 1);
  await svc.close();
}

async function search(svc: TestService, key: string, query: string, mode: string) {
  return svc.request<SearchView>('POST', '/api/v1/search', { key, json: { query, mode, limit: 5 } });
}

/** Runs the real CLI against the shared data directory; returns its exit code, stdout and stderr. */
async function kbReindex(env: Record<string, string>, args: string[] = []) {
  try {
    const { stdout, stderr } = await run(process.execPath, [KB_BIN, 'reindex', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, KB_DATA_DIR: data.path, KB_BOOTSTRAP_KEY: 'false', KB_LOG_LEVEL: 'warn', ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

beforeAll(async () => {
  cohere = await startCohereFake({ token: 'test' });
  data = await tempDir('kb-reindex-');
}, 30_000);

afterAll(async () => {
  for (const svc of open.splice(0)) await svc.close();
  await cohere?.close();
  await data?.remove();
});

describe('kb reindex', () => {
  it('builds a knowledge base with the local provider', async () => {
    const svc = await startTestService({ dataDir: data.path, env: { KB_EMBEDDING_PROVIDER: 'local' } });
    open.push(svc);
    workspaceId = svc.workspaceId;
    for (const name of ['glaciers', 'volcanoes'] as const) {
      const res = await svc.upload(`${name}.md`, DOCS[name], { type: 'text/markdown' });
      expect(res.status).toBe(201);
      ids[name] = res.body.document_id;
    }
    for (const id of Object.values(ids)) await svc.waitForStatus(id, 'completed');
    const model = await svc.runtime.ports.documents.getIndexModel();
    expect(model?.model).toMatch(/^local\//);
    localModel = model?.model ?? '';
    const res = await search(svc, svc.keys.all, 'glacier ice meltwater', 'semantic');
    expect(res.body.results[0]?.document_id).toBe(ids.glaciers);
    expect(cohere.calls).toEqual([]);
    await closeService(svc);
  });

  it('refuses to index vectors of another model, and says how to move the index', async () => {
    const { svc, key } = await serviceOnData(cohereEnv());
    const res = await svc.upload('bakery.txt', DOCS.bakery, { key });
    expect(res.status).toBe(201);
    const bakeryId: string = res.body.document_id;
    ids.bakery = bakeryId;
    const failed = await svc.waitForStatus(bakeryId, 'failed', { key });
    expect(failed.error).toMatchObject({ code: 'model-mismatch', stage: 'index', attempts: 1 });
    expect(failed.error?.message).toContain('cohere/embed-english-v3.0');
    expect(failed.error?.message).toContain(localModel);
    expect(failed.error?.message).toContain('kb reindex');
    // The index still holds only the local model's vectors.
    expect((await svc.runtime.ports.documents.getIndexModel())?.model).toBe(localModel);

    // Search says so too: semantic refuses, hybrid falls back to keywords with a warning.
    const semantic = await search(svc, key, 'glacier ice', 'semantic');
    const problem = expectProblem(semantic, 409, 'conflict');
    expect(problem.detail).toContain('kb reindex');
    const hybrid = await search(svc, key, 'glacier ice', 'hybrid');
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.warnings?.join(' ')).toContain('kb reindex');
    expect(hybrid.body.results[0]?.document_id).toBe(ids.glaciers);
    await closeService(svc);
  });

  it('re-embeds every chunk with the new model, showing progress on stderr', async () => {
    cohere.reset();
    const result = await kbReindex(cohereEnv());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Index moved from ${localModel} to cohere/embed-english-v3.0`);
    const total = Number(/: (\d+) chunks, /.exec(result.stdout)?.[1]);
    const [, embeddedNow, fromCache] = /(\d+) embedded now and (\d+) from the vector cache/.exec(result.stdout) ?? [];
    expect(Number(embeddedNow) + Number(fromCache)).toBe(total);
    expect(result.stderr).toContain('Re-embedding chunks');
    expect(result.stderr).toContain(`100% | ${total}/${total}`);
    const documentCalls = cohere.calls.filter((c) => c.body?.input_type === 'search_document');
    expect(documentCalls.length).toBeGreaterThan(0);
    expect(cohere.violations).toEqual([]);

    const { svc, key } = await serviceOnData(cohereEnv());
    const store = svc.runtime.ports.documents;
    expect(await store.getIndexModel()).toEqual({ model: 'cohere/embed-english-v3.0', dimensions: cohere.dimensions });
    const sent = new Set(documentCalls.flatMap((c) => c.body?.texts as string[]));
    let chunkCount = 0;
    for (const name of ['glaciers', 'volcanoes']) {
      const doc = await svc.request<DocumentView>('GET', `/api/v1/documents/${ids[name]}`, { key });
      expect(doc.body.status).toBe('completed');
      expect(await store.hasVectors(ids[name] as string, 1)).toBe(true);
      expect((await store.getVersion(ids[name] as string, 1))?.embeddingModel).toBe('cohere/embed-english-v3.0');
      // Every chunk's text went to the new model.
      const chunks = await svc.request<ChunksView>('GET', `/api/v1/chunks/${ids[name]}`, { key });
      for (const chunk of chunks.body.chunks) expect(sent.has(chunk.content)).toBe(true);
      chunkCount += chunks.body.chunks.length;
    }
    expect(total).toBe(chunkCount);

    // Semantic search now embeds the query with Cohere and finds the documents.
    cohere.reset();
    const volcano = await search(svc, key, 'magma lava eruption crater', 'semantic');
    expect(volcano.status, volcano.text).toBe(200);
    expect(volcano.body.warnings).toBeUndefined();
    expect(volcano.body.results[0]?.document_id).toBe(ids.volcanoes);
    expect(cohere.calls.map((c) => c.body?.input_type)).toEqual(['search_query']);
    const glacier = await search(svc, key, 'glacier meltwater moraines', 'hybrid');
    expect(glacier.body.results[0]?.document_id).toBe(ids.glaciers);

    // A metadata change still reuses the re-embedded chunks: the new version is served at once.
    const patched = await svc.request<DocumentView>('PATCH', `/api/v1/documents/${ids.glaciers}`, {
      key,
      json: { metadata: { topic: 'ice' } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ version: 2, status: 'completed' });

    // The refused document goes through once reprocessed.
    const reprocess = await svc.request('POST', `/api/v1/documents/${ids.bakery}/reprocess`, { key });
    expect(reprocess.status).toBe(202);
    const done = await svc.waitForStatus(ids.bakery as string, 'completed', { key });
    expect(done.error).toBeNull();
    const bakery = await search(svc, key, 'sourdough rye cinnamon', 'semantic');
    expect(bakery.body.results[0]?.document_id).toBe(ids.bakery);
    await closeService(svc);
  });

  it('changes nothing when run again: every vector comes from the cache, and it says the index stayed', async () => {
    cohere.reset();
    const result = await kbReindex(cohereEnv());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('moved');
    expect(result.stdout).toContain('The index is already on cohere/embed-english-v3.0');
    // The counts add up: every chunk's vector came from the cache, none was embedded.
    const counts =
      /(\d+) chunks checked, 0 embedded now and (\d+) from the vector cache \(0 distinct texts sent to the model\)/.exec(
        result.stdout,
      );
    expect(counts?.[1]).toBeDefined();
    expect(counts?.[2]).toBe(counts?.[1]);
    expect(cohere.calls).toEqual([]);
  });

  it('with --force, embeds every chunk again with the model instead of taking the cache', async () => {
    cohere.reset();
    const result = await kbReindex(cohereEnv(), ['--force', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, number | string | boolean>;
    expect(report).toMatchObject({
      from_model: 'cohere/embed-english-v3.0',
      to_model: 'cohere/embed-english-v3.0',
      forced: true,
      chunks_from_cache: 0,
    });
    expect(report.chunks_embedded).toBe(report.chunks);
    expect(Number(report.chunks)).toBeGreaterThan(0);
    const sent = cohere.calls
      .filter((c) => c.body?.input_type === 'search_document')
      .flatMap((c) => c.body?.texts as string[]);
    expect(sent.length).toBe(report.texts_embedded);

    const text = await kbReindex(cohereEnv(), ['--force']);
    expect(text.stdout).toMatch(/Re-embedded the index with cohere\/embed-english-v3\.0 \(--force\): \d+ chunks/);
  });
});
