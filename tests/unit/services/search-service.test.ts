/**
 * The search service over a small in-memory document store and embedding provider: what a user
 * sees of the candidate pool, phrase matches, grouping, `min_score`, an index built with another
 * model and `as_of`.
 */
import { describe, expect, it } from 'vitest';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import type { RequestContext } from '../../../core/services/request-context.ts';
import { createSearchService, SEARCH_CANDIDATES } from '../../../core/services/search.service.ts';
import type { SearchRequest } from '../../../core/services/services.ts';

type Hit = Awaited<ReturnType<DocumentStore['keywordSearch']>>[number];
type StoreQuery = Parameters<DocumentStore['vectorSearch']>[0];

const ctx: RequestContext = { workspaceId: 'ws', keyId: 'key-1', traceId: 'trace-1' };
const MODEL = 'test/embedder';

/** A chunk `doc:version:index` with `content`, scored `score` by the ranking that returns it. */
const hit = (id: string, score: number, content = `Chunk ${id} of the text.`): Hit => {
  const [documentId = '', version = '1', index = '0'] = id.split(':');
  return {
    chunk: {
      id,
      documentId,
      workspaceId: ctx.workspaceId,
      version: Number(version),
      index: Number(index),
      content,
      contentHash: id,
      tokens: 8,
      startOffset: 0,
      endOffset: content.length,
      page: null,
      metadata: {},
    },
    score,
    documentName: `${documentId}.txt`,
    documentMetadata: { team: 'docs' },
    mimeType: 'text/plain',
  };
};

interface FakeStoreOptions {
  readonly keyword?: readonly Hit[];
  readonly semantic?: readonly Hit[];
  /** The model the index was built with (null: an empty index). */
  readonly indexModel?: string | null;
  /** Vector size of the index model (default 2, the fake embedder's). */
  readonly indexDimensions?: number;
  /** Oldest instant whose versions are still searchable (null: nothing archived). */
  readonly archivedHorizon?: string | null;
}

/** A store that ranks its fixed hits by score and returns at most `limit`, as the real ones do. */
function fakeStore(options: FakeStoreOptions) {
  const queries: { kind: 'keyword' | 'vector'; query: StoreQuery | Omit<StoreQuery, 'vector'> }[] = [];
  const top = (hits: readonly Hit[] = [], limit: number) => [...hits].sort((a, b) => b.score - a.score).slice(0, limit);
  const store = {
    async keywordSearch(query: Omit<StoreQuery, 'vector'>) {
      queries.push({ kind: 'keyword', query });
      return top(options.keyword, query.limit);
    },
    async vectorSearch(query: StoreQuery) {
      queries.push({ kind: 'vector', query });
      return top(options.semantic, query.limit);
    },
    async getIndexModel() {
      const model = options.indexModel === undefined ? MODEL : options.indexModel;
      return model === null ? null : { model, dimensions: options.indexDimensions ?? 2 };
    },
    async archivedHorizon() {
      return options.archivedHorizon ?? null;
    },
  };
  return { store: store as unknown as DocumentStore, queries };
}

function fakeEmbeddings(): EmbeddingProvider & { queries: string[] } {
  const queries: string[] = [];
  return {
    provider: 'fake',
    model: MODEL,
    dimensions: 2,
    queries,
    async embedDocuments(texts) {
      return texts.map(() => new Float32Array([1, 0]));
    },
    async embedQuery(text) {
      queries.push(text);
      return new Float32Array([1, 0]);
    },
    async close() {},
  };
}

function searchOver(options: FakeStoreOptions) {
  const { store, queries } = fakeStore(options);
  const embeddings = fakeEmbeddings();
  const service = createSearchService({
    documents: store,
    getEmbeddings: async () => embeddings,
    defaultWeights: { keyword: 0.5, semantic: 0.5 },
  });
  const search = (request: Partial<SearchRequest> & { query: string }) =>
    service.search(ctx, { limit: 10, mode: 'keyword', filters: {}, ...request });
  return { search, queries, embeddings };
}

const chunkIds = (view: { results: { chunk_id: string }[] }) => view.results.map((r) => r.chunk_id);

describe('search service: candidate pool', () => {
  it('asks every ranking for the same fixed pool of candidates whatever the limit', async () => {
    const { search, queries } = searchOver({ keyword: [hit('a:1:0', 3)], semantic: [hit('a:1:0', 0.9)] });
    await search({ query: 'anything', mode: 'hybrid', limit: 1 });
    await search({ query: 'anything', mode: 'hybrid', limit: 50 });
    expect(queries.map((q) => q.query.limit)).toEqual(Array(4).fill(SEARCH_CANDIDATES));
  });

  it('gives the same first results for a small page as for a large one', async () => {
    const keyword = Array.from({ length: 30 }, (_, i) => hit(`d${i}:1:0`, 30 - i));
    const semantic = Array.from({ length: 30 }, (_, i) => hit(`d${(i * 7) % 30}:1:0`, 1 - i / 40));
    const { search } = searchOver({ keyword, semantic });
    const small = await search({ query: 'field notes', mode: 'hybrid', limit: 3 });
    const large = await search({ query: 'field notes', mode: 'hybrid', limit: 20 });
    expect(small.results).toHaveLength(3);
    expect(large.results).toHaveLength(20);
    expect(chunkIds(small)).toEqual(chunkIds(large).slice(0, 3));
  });

  it('fills a page grouped by document even when the best chunks all come from one document', async () => {
    const keyword = [hit('a:1:0', 9), hit('a:1:2', 8), hit('a:1:4', 7), hit('b:1:0', 6), hit('c:1:0', 5)];
    const { search } = searchOver({ keyword });
    const page = await search({ query: 'glacier', limit: 2, groupBy: 'document' });
    expect(page.results.map((r) => r.document_id)).toEqual(['a', 'b']);
  });
});

describe('search service: phrase matches', () => {
  const keyword = [
    hit('x:1:0', 12, 'powerhouse cells and the mitochondria of plants'),
    hit('y:1:0', 4, 'As every student learns, the mitochondria is the powerhouse of the cell.'),
  ];

  it('puts a chunk holding the query as a phrase first in keyword search, above better BM25 scores', async () => {
    const { search } = searchOver({ keyword });
    const view = await search({ query: 'the mitochondria is the powerhouse of the cell' });
    expect(chunkIds(view)).toEqual(['y:1:0', 'x:1:0']);
  });

  it('does the same in hybrid search', async () => {
    const semantic = [hit('x:1:0', 0.9, keyword[0]?.chunk.content), hit('y:1:0', 0.2, keyword[1]?.chunk.content)];
    const { search } = searchOver({ keyword, semantic });
    const view = await search({ query: 'mitochondria is the powerhouse', mode: 'hybrid' });
    expect(chunkIds(view)).toEqual(['y:1:0', 'x:1:0']);
  });

  it('leaves semantic search to the similarity scores', async () => {
    const semantic = [hit('x:1:0', 0.9, keyword[0]?.chunk.content), hit('y:1:0', 0.2, keyword[1]?.chunk.content)];
    const { search } = searchOver({ semantic });
    const view = await search({ query: 'mitochondria is the powerhouse', mode: 'semantic' });
    expect(chunkIds(view)).toEqual(['x:1:0', 'y:1:0']);
  });
});

describe('search service: grouping and min_score', () => {
  const keyword = [
    hit('a:1:3', 9, 'Chunk three of the text ends with the shared tail sentence.'),
    hit('a:1:4', 8, 'ends with the shared tail sentence. Chunk four goes on.'),
    hit('b:1:0', 7, 'Another document entirely.'),
    hit('a:1:9', 6, 'Chunk nine, far away from the others.'),
  ];

  it('drops a chunk repeating the text of a better neighbour by default', async () => {
    const { search } = searchOver({ keyword });
    expect(chunkIds(await search({ query: 'chunk' }))).toEqual(['a:1:3', 'b:1:0', 'a:1:9']);
  });

  it('keeps one chunk per document with group_by document, and every chunk with none', async () => {
    const { search } = searchOver({ keyword });
    expect(chunkIds(await search({ query: 'chunk', groupBy: 'document' }))).toEqual(['a:1:3', 'b:1:0']);
    expect(chunkIds(await search({ query: 'chunk', groupBy: 'none' }))).toEqual(['a:1:3', 'a:1:4', 'b:1:0', 'a:1:9']);
  });

  it('leaves out results scoring below min_score, on the score the mode reports', async () => {
    const { search } = searchOver({ keyword });
    const view = await search({ query: 'chunk', minScore: 7 });
    expect(view.results.map((r) => [r.chunk_id, r.score])).toEqual([
      ['a:1:3', 9],
      ['b:1:0', 7],
    ]);
  });

  it('returns each result with its document, content, metadata and highlighted query terms', async () => {
    const { search } = searchOver({ keyword });
    const [first] = (await search({ query: 'shared tail', limit: 1 })).results;
    expect(first).toMatchObject({
      chunk_id: 'a:1:3',
      document_id: 'a',
      document_name: 'a.txt',
      version: 1,
      index: 3,
      content: 'Chunk three of the text ends with the shared tail sentence.',
      metadata: { team: 'docs' },
      page: null,
    });
    expect(first?.highlights).toEqual([
      'Chunk three of the text ends with the <em>shared</em> <em>tail</em> sentence.',
    ]);
  });
});

describe('search service: an index built with another model', () => {
  const keyword = [hit('a:1:0', 5, 'Glaciers retreat in warm summers.')];
  const semantic = [hit('b:1:0', 0.8, 'Ice sheets melt.')];

  it('refuses semantic search with model-mismatch, telling the operator to reindex', async () => {
    const { search } = searchOver({ keyword, semantic, indexModel: 'other/model' });
    const attempt = search({ query: 'glaciers', mode: 'semantic' });
    await expect(attempt).rejects.toMatchObject({ code: 'model-mismatch', retriable: false });
    await expect(attempt).rejects.toThrow(/other\/model.*test\/embedder.*kb reindex/);
  });

  it('answers hybrid search from the keyword ranking alone, with a warning saying so', async () => {
    const { search, queries, embeddings } = searchOver({ keyword, semantic, indexModel: 'other/model' });
    const view = await search({ query: 'glaciers', mode: 'hybrid' });
    expect(view.mode).toBe('hybrid');
    expect(chunkIds(view)).toEqual(['a:1:0']);
    expect(view.warnings).toEqual([expect.stringMatching(/kb reindex.*Falling back to keyword search\.$/)]);
    expect(queries.map((q) => q.kind)).toEqual(['keyword']);
    expect(embeddings.queries).toEqual([]);
  });

  it('treats an index of the same model name at another vector size as another model', async () => {
    const { search } = searchOver({ keyword, semantic, indexDimensions: 3 });
    const attempt = search({ query: 'glaciers', mode: 'semantic' });
    await expect(attempt).rejects.toMatchObject({ code: 'model-mismatch' });
    await expect(attempt).rejects.toThrow(/3-dimensional vectors of test\/embedder.*answers 2-dimensional.*kb reindex/);
    const hybrid = await search({ query: 'glaciers', mode: 'hybrid' });
    expect(chunkIds(hybrid)).toEqual(['a:1:0']);
    expect(hybrid.warnings).toEqual([expect.stringMatching(/Falling back to keyword search\.$/)]);
  });

  it('searches semantically once the index is empty (no model yet) or built with the same model', async () => {
    for (const indexModel of [null, MODEL]) {
      const { search } = searchOver({ keyword, semantic, indexModel });
      const view = await search({ query: 'glaciers', mode: 'semantic' });
      expect(chunkIds(view)).toEqual(['b:1:0']);
      expect(view.warnings).toBeUndefined();
    }
  });
});

describe('search service: hybrid timing', () => {
  const keyword = [hit('a:1:0', 5, 'Glaciers retreat in warm summers.')];
  const semantic = [hit('b:1:0', 0.8, 'Ice sheets melt.')];

  it('runs the keyword ranking while the query is embedded, not after', async () => {
    const { store, queries } = fakeStore({ keyword, semantic });
    let keywordStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      keywordStarted = resolve;
    });
    const watched = {
      ...store,
      keywordSearch: (q: Omit<StoreQuery, 'vector'>) => {
        keywordStarted();
        return store.keywordSearch(q);
      },
    };
    // The embedding answers only once the keyword ranking has begun: a service that embedded first
    // would wait here for ever.
    const embeddings = {
      ...fakeEmbeddings(),
      embedQuery: async () => {
        await started;
        return new Float32Array([1, 0]);
      },
    };
    const service = createSearchService({
      documents: watched as DocumentStore,
      getEmbeddings: async () => embeddings,
      defaultWeights: { keyword: 0.5, semantic: 0.5 },
    });
    const view = await service.search(ctx, { query: 'glaciers', limit: 10, mode: 'hybrid', filters: {} });
    expect(chunkIds(view).sort()).toEqual(['a:1:0', 'b:1:0']);
    expect(queries.map((q) => q.kind).sort()).toEqual(['keyword', 'vector']);
  }, 5000);

  it('answers a keyword ranking that fails during the embedding with its error, nothing left unhandled', async () => {
    const { store } = fakeStore({ keyword, semantic });
    const failing = {
      ...store,
      keywordSearch: async () => {
        throw new Error('keyword index unavailable');
      },
    };
    const embeddings = {
      ...fakeEmbeddings(),
      embedQuery: () => new Promise<Float32Array>((resolve) => setTimeout(() => resolve(new Float32Array([1, 0])), 20)),
    };
    const service = createSearchService({
      documents: failing as unknown as DocumentStore,
      getEmbeddings: async () => embeddings,
      defaultWeights: { keyword: 0.5, semantic: 0.5 },
    });
    await expect(service.search(ctx, { query: 'glaciers', limit: 10, mode: 'hybrid', filters: {} })).rejects.toThrow(
      'keyword index unavailable',
    );
  });
});

describe('search service: as_of', () => {
  const keyword = [hit('a:1:0', 5)];

  it('searches now when as_of lies in the future, and echoes the instant asked for', async () => {
    const { search, queries } = searchOver({ keyword });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const view = await search({ query: 'chunk', asOf: future });
    expect(queries[0]?.query.asOf).toBeNull();
    expect(view.as_of).toBe(future);
    expect(view.warnings).toBeUndefined();
  });

  it('searches a past instant as of then', async () => {
    const { search, queries } = searchOver({ keyword });
    const view = await search({ query: 'chunk', asOf: '2024-03-01T12:00:00Z' });
    expect(queries[0]?.query.asOf).toBe('2024-03-01T12:00:00.000Z');
    expect(view.as_of).toBe('2024-03-01T12:00:00.000Z');
  });

  it('warns when as_of reaches back before the archived history', async () => {
    const { search } = searchOver({ keyword, archivedHorizon: '2025-01-01T00:00:00.000Z' });
    const view = await search({ query: 'chunk', asOf: '2024-03-01T12:00:00Z' });
    expect(view.warnings).toEqual([expect.stringContaining('before 2025-01-01T00:00:00.000Z were archived')]);
  });

  it('refuses an as_of that is not a date-time as a validation error', async () => {
    const { search } = searchOver({ keyword });
    await expect(search({ query: 'chunk', asOf: 'yesterday' })).rejects.toMatchObject({ code: 'validation-error' });
  });
});
