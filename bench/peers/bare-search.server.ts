/**
 * The search rows' floor: a bare Fastify server (no plugins, no logging, no authentication, rate
 * limit or metrics) in a process of its own that answers `POST /search` with the store queries
 * the service makes — keyword and/or vector, the same candidates — and returns the first `limit`
 * hits, hybrid ones fused as the service fuses them. No phrase boost, no grouping, no highlights.
 * It is what a team would write in an afternoon over the same store: the least any HTTP service
 * in front of it adds. Configured like `kb serve` (the same variables); prints its port.
 */
import Fastify from 'fastify';
import pino from 'pino';
import { loadConfig } from '../../core/config/config.ts';
import type { SearchHit, StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { createRuntime } from '../../core/runtime/runtime.ts';
import { SEARCH_CANDIDATES } from '../../core/services/search.service.ts';
import { fuseScores } from '../../core/services/search-ranking.ts';

interface SearchBody {
  readonly workspace_id: string;
  readonly query: string;
  readonly mode: 'keyword' | 'semantic' | 'hybrid';
  readonly limit: number;
}

const config = loadConfig();
const runtime = await createRuntime(config, { stages: 'none', logger: pino({ level: 'silent' }) });
const store = runtime.ports.documents;
const embeddings = await runtime.ports.getEmbeddings();

const app = Fastify({ logger: false });
app.post<{ Body: SearchBody }>('/search', async (request) => {
  const { workspace_id: workspaceId, query, mode, limit } = request.body;
  const base: StoreSearchQuery = { workspaceId, text: query, limit: SEARCH_CANDIDATES, asOf: null, filters: {} };
  let hits: readonly { hit: SearchHit; score: number }[];
  if (mode === 'keyword') {
    hits = (await store.keywordSearch(base)).map((hit) => ({ hit, score: hit.score }));
  } else {
    const vector = await embeddings.embedQuery(query);
    if (mode === 'semantic') {
      hits = (await store.vectorSearch({ ...base, vector })).map((hit) => ({ hit, score: hit.score }));
    } else {
      const [keyword, semantic] = await Promise.all([
        store.keywordSearch(base),
        store.vectorSearch({ ...base, vector }),
      ]);
      const semanticWeight = config.search.semanticWeightPercent / 100;
      hits = fuseScores(keyword, semantic, { semantic: semanticWeight, keyword: 1 - semanticWeight });
    }
  }
  return {
    results: hits.slice(0, limit).map(({ hit, score }) => ({
      chunk_id: hit.chunk.id,
      document_id: hit.chunk.documentId,
      document_name: hit.documentName,
      version: hit.chunk.version,
      index: hit.chunk.index,
      score,
      content: hit.chunk.content,
      metadata: hit.documentMetadata,
    })),
  };
});

const close = async () => {
  await app.close();
  await runtime.close();
  process.exit(0);
};
process.once('SIGTERM', close);
process.once('SIGINT', close);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(typeof address === 'object' && address ? address.port : 0);
