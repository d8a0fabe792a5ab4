/**
 * Filtered search: latency and recall when a metadata filter passes 1 %, 10 % or 50 % of the chunks.
 *
 * The corpus is the search scenario's (synthetic chunks written through the store port, Zipf text,
 * vectors mixed from real ones), its documents carrying metadata `tenant`: the first 1 % of the
 * documents `p1`, the next 10 % `p10`, the next 50 % `p50`, the rest `rest` (text and vectors are
 * drawn independently of a document's place, so each tenant is a random sample of the corpus).
 * For each tenant and each mode, the latency queries go through `POST /api/v1/search` of a
 * `kb serve --stages none` child with `filters: { metadata: { tenant } }`: one client, then
 * {@link CLIENTS} concurrent clients.
 *
 * Recall@10 against the exact filtered answer, through the store port (as the search recall row):
 * semantic = the store's filtered `vectorSearch` (the service's candidates, first 10) against the
 * brute-force cosine top 10 of the tenant's chunks; keyword = the store's filtered `keywordSearch`
 * against the store's unfiltered keyword ranking (the first {@link KEYWORD_DEPTH}) restricted to the
 * tenant, a query counted only when that restriction holds 10 hits or the ranking ended (else its
 * exact answer is not known). Hybrid fuses these two rankings; its recall is not measured apart.
 */

import type { StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { SEARCH_CANDIDATES } from '../../core/services/search.service.ts';
import { startChild, stopChild } from '../../support/child-service.ts';
import { corpusQueries, sizeLabel } from '../corpus.ts';
import type { BenchContext } from '../lib/context.ts';
import { addOpenSearchRatios } from '../lib/opensearch-ratio.ts';
import { addFigure, createRow, judge, type Row } from '../lib/report.ts';
import { createSearchRuns } from '../lib/search-runs.ts';
import { childEnv, openInstance } from '../lib/service.ts';
import { latencies, mean } from '../lib/stats.ts';
import { baseVectors, exactTopKAll, type SyntheticData, writeSyntheticChunks } from '../lib/synthetic.ts';
import type { Target } from '../lib/target.ts';
import { vectorIndexReady } from '../lib/vector-index-ready.ts';
import { zipfQueries, zipfVocabulary } from '../lib/zipf-corpus.ts';
import { keywordIndexReady } from './search.scenario.ts';

const CLIENTS = 8;
const MODES = ['semantic', 'keyword', 'hybrid'] as const;
type Mode = (typeof MODES)[number];
const PER_DOCUMENT = 100;
/** The tenants that the filters name, with the share of the documents (and so of the chunks) each holds. */
const TENANTS = [
  { value: 'p1', share: 0.01 },
  { value: 'p10', share: 0.1 },
  { value: 'p50', share: 0.5 },
] as const;
/** How deep the unfiltered keyword ranking is read to find a tenant's exact top 10. */
const KEYWORD_DEPTH = 2000;

/** The tenant of document `d` of `documents`, by contiguous ranges of documents. */
function tenantRanges(documents: number): Array<{ value: string; from: number; to: number }> {
  const ranges: Array<{ value: string; from: number; to: number }> = [];
  let from = 0;
  for (const { value, share } of TENANTS) {
    const to = Math.min(documents, from + Math.max(1, Math.round(documents * share)));
    ranges.push({ value, from, to });
    from = to;
  }
  ranges.push({ value: 'rest', from, to: documents });
  return ranges;
}

/** Appends rows as they complete, so a later failure keeps the earlier rows. */
export async function searchFilteredScenario(ctx: BenchContext, target: Target, rows: Row[]): Promise<void> {
  const sizes = [...ctx.options.searchSizes].sort((a, b) => a - b);
  const vocabulary = zipfVocabulary(ctx.options.seed);
  const queryTerms = zipfQueries(vocabulary, ctx.options.latencyQueries, ctx.options.seed);
  const queries = queryTerms.map((ranks) => ranks.map((rank) => vocabulary.terms[rank]).join(' '));
  const base = await baseVectors(ctx.provider, ctx.vectors.values(), 64, ctx.options.seed);
  for (const size of sizes) {
    const instance = await target.fresh();
    try {
      const service = await openInstance(instance, { embeddings: ctx.provider, keys: CLIENTS });
      let child: Awaited<ReturnType<typeof startChild>> | null = null;
      try {
        const store = service.runtime.ports.documents;
        const provider = ctx.provider;
        const ranges = tenantRanges(Math.ceil(size / PER_DOCUMENT));
        const tenantOf = (d: number) => ranges.find((r) => d >= r.from && d < r.to)?.value ?? 'rest';
        ctx.progress(`search, filtered (${target.runtime}): writing ${size} synthetic chunks`);
        const data = await writeSyntheticChunks(store, {
          workspaceId: service.workspaceId,
          chunks: size,
          perDocument: PER_DOCUMENT,
          writers: 8,
          model: provider,
          base,
          seed: ctx.options.seed,
          text: { vocabulary, queries: queryTerms },
          documentMetadata: (d) => ({ tenant: tenantOf(d) }),
        });
        // The first vector query starts the embedded vector index's build (saved for kb serve).
        ctx.progress(`search, filtered (${target.runtime}): first vector query, vector index built`);
        await store.vectorSearch({
          workspaceId: service.workspaceId,
          text: queries[0] as string,
          vector: await provider.embedQuery(queries[0] as string),
          limit: SEARCH_CANDIDATES,
          asOf: null,
          filters: {},
        });
        await vectorIndexReady(store);
        child = await startChild(['serve', '--stages', 'none'], childEnv(instance));
        const url = child.url;
        if (target.runtime === 'embedded') await keywordIndexReady(url);
        const searchRuns = createSearchRuns(child, service.keys);
        const servedRun = (mode: Mode, tenant: string, clients: number) =>
          searchRuns(queries, clients, (text) => ({ query: text, mode, limit: 10, filters: { metadata: { tenant } } }));
        // Warm-up: page cache, prepared statements, the candidate pools of each kind of query.
        for (const { value } of TENANTS) for (const mode of MODES) await servedRun(mode, value, CLIENTS);

        const recallQueries = corpusQueries(Math.min(ctx.options.recallQueries, 50), ctx.options.seed + 1);
        const recallVectors: Float32Array[] = [];
        for (const text of recallQueries) recallVectors.push(await provider.embedQuery(text));
        const rounds = size >= 50_000 ? Math.min(2, ctx.options.rounds) : ctx.options.rounds;
        for (const tenant of TENANTS) {
          const range = ranges.find((r) => r.value === tenant.value) as (typeof ranges)[number];
          const firstRow = range.from * PER_DOCUMENT;
          const endRow = Math.min(size, range.to * PER_DOCUMENT);
          const passing = (endRow - firstRow) / size;
          const recall = await filteredRecall(store, service.workspaceId, data, tenant.value, firstRow, endRow, {
            texts: recallQueries,
            vectors: recallVectors,
            keywordTexts: queries,
          });
          for (const mode of MODES) {
            const row = createRow(
              `search, filtered ${sizeLabelOfShare(tenant.share)}, ${mode}`,
              target.runtime,
              `${sizeLabel(size)} chunks`,
            );
            const alone50: number[] = [];
            const clients50: number[] = [];
            for (let round = 0; round < rounds; round++) {
              ctx.progress(
                `search, filtered (${target.runtime}, ${sizeLabel(size)}, tenant ${tenant.value}, ${mode}): round ${round + 1}`,
              );
              alone50.push(latencies((await servedRun(mode, tenant.value, 1)).durations).p50);
              clients50.push(latencies((await servedRun(mode, tenant.value, CLIENTS)).durations).p50);
            }
            addFigure(row, 'chunks the filter passes', 'fraction', [passing]);
            const embeddedMillion = target.runtime === 'embedded' && size >= 1_000_000;
            const alone = addFigure(row, 'service p50, one client', 'ms', alone50);
            const many = addFigure(row, `service p50, ${CLIENTS} clients`, 'ms', clients50);
            if (embeddedMillion) {
              judge(alone, { atMost: 50 });
              judge(many, { atMost: 250 });
            }
            const recallOf = mode === 'semantic' ? recall.semantic : mode === 'keyword' ? recall.keyword : null;
            if (recallOf !== null && recallOf.length > 0) {
              const figure = addFigure(row, 'recall@10 against the exact filtered answer', 'fraction', [
                mean(recallOf),
              ]);
              if (target.runtime === 'embedded') judge(figure, { atLeast: 0.95 });
            }
            row.notes.push(
              `filter metadata.tenant = ${tenant.value} (${(passing * 100).toFixed(1)} % of the chunks); ${queries.length} Zipf queries per run, limit 10, through kb serve's HTTP API; ${rounds} round(s)`,
            );
            if (mode === 'semantic')
              row.notes.push(
                `recall: ${recall.semantic.length} corpus queries, store vectorSearch with the filter (${SEARCH_CANDIDATES} candidates, first 10) against brute-force cosine over the tenant's chunks`,
              );
            if (mode === 'keyword')
              row.notes.push(
                `recall: ${recall.keyword.length} of ${queries.length} Zipf queries (the others' exact answer lies below the unfiltered ranking's first ${KEYWORD_DEPTH}), store keywordSearch with the filter against the unfiltered ranking restricted to the tenant`,
              );
            if (mode === 'hybrid')
              row.notes.push('hybrid fuses the keyword and semantic rankings; recall not measured apart');
            rows.push(row);
          }
        }
      } finally {
        if (child) await stopChild(child);
        await service.close();
      }
    } finally {
      await instance.cleanup();
    }
  }
}

function sizeLabelOfShare(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/** Recall@10 per query of the filtered store rankings against their exact filtered answers. */
async function filteredRecall(
  store: Parameters<typeof writeSyntheticChunks>[0],
  workspaceId: string,
  data: SyntheticData,
  tenant: string,
  firstRow: number,
  endRow: number,
  queries: { texts: readonly string[]; vectors: readonly Float32Array[]; keywordTexts: readonly string[] },
): Promise<{ semantic: number[]; keyword: number[] }> {
  const filters = { metadata: { tenant: [tenant] } };
  const base = (text: string): StoreSearchQuery => ({
    workspaceId,
    text,
    limit: SEARCH_CANDIDATES,
    asOf: null,
    filters,
  });
  // The tenant's rows are contiguous: the exact search runs over a copy of that slice of the matrix
  // (usearch reads a typed array from the start of its buffer, so a subarray would not do).
  const slice: SyntheticData = {
    ids: data.ids.slice(firstRow, endRow),
    matrix: data.matrix.slice(firstRow * data.dimensions, endRow * data.dimensions),
    dimensions: data.dimensions,
    documents: 0,
  };
  const exact = exactTopKAll(slice, queries.vectors, 10);
  const semantic: number[] = [];
  for (const [q, text] of queries.texts.entries()) {
    const hits = await store.vectorSearch({ ...base(text), vector: queries.vectors[q] as Float32Array });
    const want = new Set((exact[q] as number[]).map((row) => slice.ids[row] as string));
    semantic.push(hits.slice(0, 10).filter((h) => want.has(h.chunk.id)).length / Math.max(1, want.size));
  }
  const keyword: number[] = [];
  const inTenant = new Set(slice.ids);
  for (const text of queries.keywordTexts) {
    const all = await store.keywordSearch({ ...base(text), limit: KEYWORD_DEPTH, filters: {} });
    const restricted = all.filter((h) => inTenant.has(h.chunk.id)).slice(0, 10);
    if (restricted.length < 10 && all.length >= KEYWORD_DEPTH) continue;
    const served = (await store.keywordSearch(base(text))).slice(0, 10);
    if (restricted.length === 0) {
      keyword.push(served.length === 0 ? 1 : 0);
      continue;
    }
    const want = new Set(restricted.map((h) => h.chunk.id));
    keyword.push(served.filter((h) => want.has(h.chunk.id)).length / want.size);
  }
  return { semantic, keyword };
}

/**
 * Adds to each embedded filtered row its one-client p50 ÷ the distributed runtime's (OpenSearch) on
 * the same corpus, size and filter, measured in the same run; judged at most 2 at 100k chunks and more.
 */
export function compareFilteredRuntimes(rows: Row[]): void {
  addOpenSearchRatios(rows, 'search, filtered', () => true);
}
