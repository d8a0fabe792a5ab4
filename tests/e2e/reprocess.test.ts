import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../core/config/config.ts';
import { KbError } from '../../core/errors/kb-error.ts';
import type { ChunksView, DocumentView, SearchView } from '../../core/model/response-views.model.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { createEmbeddingProvider } from '../../core/runtime/create-embedding-provider.ts';
import { tempDir } from '../../support/child-service.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { expectProblem, sectionedDocument, startTestService, type TestService } from '../support/test-service.ts';

/**
 * A version that failed for a retriable reason (the embedding provider was down for every
 * attempt) completes after `POST /documents/:id/reprocess` once the provider is back.
 */

const MAX_ATTEMPTS = 3;

/** The real local provider behind a switch: while down, embedding documents fails retriably. */
function switchableProvider(inner: EmbeddingProvider) {
  let down = false;
  let failedCalls = 0;
  const provider: EmbeddingProvider = {
    provider: inner.provider,
    model: inner.model,
    dimensions: inner.dimensions,
    async embedDocuments(texts) {
      if (down) {
        failedCalls += 1;
        throw new KbError('embedding-failed', 'The embedding provider answered 503 Service Unavailable.', {
          retriable: true,
        });
      }
      return inner.embedDocuments(texts);
    },
    embedQuery: (text) => inner.embedQuery(text),
    close: () => inner.close(),
  };
  return {
    provider,
    goDown() {
      down = true;
    },
    recover() {
      down = false;
    },
    failedCalls: () => failedCalls,
  };
}

let svc: TestService;
let embeddings: ReturnType<typeof switchableProvider>;
let inner: EmbeddingProvider;

beforeAll(async () => {
  inner = await createEmbeddingProvider(configFrom().embedding);
  embeddings = switchableProvider(inner);
  svc = await startTestService({
    embeddings: embeddings.provider,
    env: { KB_STAGE_MAX_ATTEMPTS: String(MAX_ATTEMPTS), KB_RETRY_BASE_MS: '10', KB_RETRY_MAX_MS: '50' },
  });
});

afterAll(async () => {
  await svc?.close();
  await inner?.close();
});

const BODY =
  '# Orchard notes\n\nThe quince trees flowered late, and the beekeeper moved four hives to the east slope.\n';

describe('POST /documents/:id/reprocess', () => {
  it('completes a document that failed while the embedding provider was down, once it is back', async () => {
    embeddings.goDown();
    const upload = await svc.upload('orchard.md', BODY, { type: 'text/markdown' });
    expect(upload.status).toBe(201);
    const id: string = upload.body.document_id;

    const failed = await svc.waitForStatus(id, 'failed');
    expect(failed.error).toEqual({
      code: 'embedding-failed',
      message: 'The embedding provider answered 503 Service Unavailable.',
      stage: 'embed',
      attempts: MAX_ATTEMPTS,
      at: expect.any(String),
    });
    expect(embeddings.failedCalls()).toBe(MAX_ATTEMPTS);
    const before = await svc.request('POST', '/api/v1/search', {
      json: { query: 'quince beekeeper', mode: 'keyword' },
    });
    expect(before.body.results).toEqual([]);

    embeddings.recover();
    const res = await svc.request<DocumentView>('POST', `/api/v1/documents/${id}/reprocess`);
    expect(res.status, res.text).toBe(202);
    expect(res.body.document_id).toBe(id);
    expect(res.body.version).toBe(1);
    expect(res.body.error).toBeNull();
    expect(['pending', 'processing', 'completed']).toContain(res.body.status);

    const done = await svc.waitForStatus(id, 'completed');
    expect(done.error).toBeNull();
    expect(done.version).toBe(1);
    expect(done.stats.chunks).toBeGreaterThan(0);
    for (const mode of ['keyword', 'semantic', 'hybrid']) {
      const search = await svc.request('POST', '/api/v1/search', { json: { query: 'quince trees beekeeper', mode } });
      expect(search.status).toBe(200);
      expect(search.body.results[0]?.document_id, mode).toBe(id);
    }
  });

  it('fails a corrupt file again, at once, with the same error', async () => {
    const upload = await svc.upload('cut-off.pdf', fixture('truncated.pdf'), { type: 'application/pdf' });
    const id: string = upload.body.document_id;
    const first = await svc.waitForStatus(id, 'failed');
    expect(first.error).toMatchObject({ code: 'corrupt-file', stage: 'parse', attempts: 1 });

    const res = await svc.request('POST', `/api/v1/documents/${id}/reprocess`);
    expect(res.status).toBe(202);
    expect(res.body.error).toBeNull();
    // The version was reset before the answer, so this `failed` is the new outcome.
    const again = await svc.waitForStatus(id, 'failed');
    expect(again.error).toMatchObject({ code: 'corrupt-file', stage: 'parse', attempts: 1 });
    expect(Date.parse(again.error?.at ?? '')).toBeGreaterThan(Date.parse(first.error?.at ?? ''));
  });

  it('needs the write permission and an existing document', async () => {
    const upload = await svc.upload('small.txt', 'A short note about the tide tables.');
    const id: string = upload.body.document_id;
    await svc.waitForStatus(id, 'completed');
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${id}/reprocess`, { key: svc.keys.read }),
      403,
      'forbidden',
    );
    expectProblem(
      await svc.request('POST', `/api/v1/documents/${id}/reprocess`, { key: svc.keys.otherWorkspace }),
      404,
      'not-found',
    );
    expectProblem(
      await svc.request('POST', '/api/v1/documents/0190a5c4-8f5e-7a6b-9c3d-2e1f0a9b8c7d/reprocess'),
      404,
      'not-found',
    );
  });
});

describe('reprocess after the chunking settings changed', () => {
  it('serves exactly the new chunks: none of the old ones is left behind', async () => {
    const data = await tempDir('kb-reprocess-');
    try {
      const before = await startTestService({ dataDir: data.path, env: { KB_CHUNK_TOKENS: '256' } });
      let id = '';
      let oldCount = 0;
      try {
        const res = await before.upload('notes.md', sectionedDocument(), { type: 'text/markdown' });
        id = res.body.document_id;
        oldCount = (await before.waitForStatus(id, 'completed')).stats.chunks;
      } finally {
        await before.close();
      }

      const after = await startTestService({ dataDir: data.path, env: { KB_CHUNK_TOKENS: '2048' } });
      try {
        const { key } = await after.createKey({
          permissions: ['read', 'search', 'write'],
          workspaceId: before.workspaceId,
        });
        expect((await after.request('POST', `/api/v1/documents/${id}/reprocess`, { key })).status).toBe(202);
        const doc = await after.waitForStatus(id, 'completed', { key });
        expect(doc.stats.chunks).toBeLessThan(oldCount);

        const chunks = await after.request<ChunksView>('GET', `/api/v1/chunks/${id}`, { key });
        expect(chunks.body.pagination.total).toBe(doc.stats.chunks);
        expect(chunks.body.chunks.map((c) => c.index)).toEqual([...Array(doc.stats.chunks).keys()]);
        expect(chunks.body.chunks.reduce((sum, c) => sum + c.tokens, 0)).toBe(doc.stats.tokens);

        const search = await after.request<SearchView>('POST', '/api/v1/search', {
          key,
          json: { query: 'researchers studying glaciers', mode: 'keyword', limit: 100 },
        });
        expect(search.body.results.length).toBeGreaterThan(0);
        for (const hit of search.body.results) expect(hit.index).toBeLessThan(doc.stats.chunks);
      } finally {
        await after.close();
      }
    } finally {
      await data.remove();
    }
  });
});
