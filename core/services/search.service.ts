import { KbError } from '../errors/kb-error.ts';
import type { AccessScope } from '../model/access-scope.model.ts';
import type { SearchResultView } from '../model/response-views.model.ts';
import type { DocumentStore, StoreSearchQuery } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { toIso } from '../util/time.ts';
import { narrowFilters, versionVisible } from './access-rules.ts';
import { documentFacts } from './document-access.ts';
import {
  collapse,
  type FusionWeights,
  fuseScores,
  normaliseWords,
  phraseFirst,
  type RankedHit,
  wholeWordAt,
} from './search-ranking.ts';
import type { SearchService } from './services.ts';

/**
 * Chunks each ranking contributes before fusion, grouping and `limit`: a fixed pool (at least the
 * largest `limit`), so the first results are the same whatever the page size.
 */
export const SEARCH_CANDIDATES = 100;

export interface SearchServiceDeps {
  readonly documents: DocumentStore;
  getEmbeddings(): Promise<EmbeddingProvider>;
  /** Hybrid weights when a request names none. */
  readonly defaultWeights: FusionWeights;
}

/**
 * Keyword scores are BM25, semantic scores cosine similarity, hybrid scores the weighted sum of both
 * rankings' min-max normalised scores (see `fuseScores`), in [0, 1]. Every mode ranks the same fixed
 * pool of {@link SEARCH_CANDIDATES} chunks per ranking. Keyword and hybrid search put chunks holding
 * the query as a phrase first; `min_score` then applies to the mode's score and the rest is grouped
 * (`collapse`) until the page is full.
 */
export function createSearchService(deps: SearchServiceDeps): SearchService {
  return {
    async search(ctx, request) {
      const started = performance.now();
      const warnings: string[] = [];
      let asOf: string | null = null;
      if (request.asOf) {
        const parsed = toIso(request.asOf);
        if (!parsed) throw new KbError('validation-error', '`as_of` is not an ISO 8601 date-time.');
        // An instant in the future means now.
        asOf = Date.parse(parsed) < Date.now() ? parsed : null;
        if (asOf) {
          const horizon = await deps.documents.archivedHorizon(ctx.workspaceId);
          if (horizon && asOf < horizon) {
            warnings.push(
              `as_of reaches into archived history: versions that stopped being served before ${horizon} were archived under the workspace's retention plan and are not searched.`,
            );
          }
        }
      }
      // A scoped token's rules narrow the request's filters; nothing left to match: no results.
      const filters = ctx.scope ? narrowFilters(ctx.scope.filters, request.filters) : request.filters;
      if (filters === null) {
        return {
          query: request.query,
          mode: request.mode,
          as_of: asOf ?? (request.asOf ? toIso(request.asOf) : null),
          results: [],
          took_ms: Math.round((performance.now() - started) * 100) / 100,
          ...(warnings.length > 0 ? { warnings } : {}),
        };
      }
      const base: StoreSearchQuery = {
        workspaceId: ctx.workspaceId,
        text: request.query,
        limit: SEARCH_CANDIDATES,
        asOf,
        filters,
      };

      let mode = request.mode;
      // Keyword and hybrid search start the keyword ranking at once: it runs in the store while the
      // query is embedded in the embedding worker.
      const keywordRanking = mode === 'semantic' ? null : deps.documents.keywordSearch(base);
      // Awaited below; a rejection while the embedding is awaited must not go unhandled meanwhile.
      keywordRanking?.catch(() => undefined);
      let vector: Float32Array | null = null;
      if (mode !== 'keyword') {
        const provider = await deps.getEmbeddings();
        const model = await deps.documents.getIndexModel();
        if (model && (model.model !== provider.model || model.dimensions !== provider.dimensions)) {
          const message =
            model.model === provider.model
              ? `The index holds ${model.dimensions}-dimensional vectors of ${model.model} but the service's embedding server answers ${provider.dimensions}-dimensional ones under that name; run \`kb reindex\`.`
              : `The index holds vectors of ${model.model} but the service embeds with ${provider.model}; run \`kb reindex\`.`;
          // A 409 whose detail reaches the client: retrying cannot help until an operator acts.
          if (mode === 'semantic') throw new KbError('model-mismatch', message);
          warnings.push(`${message} Falling back to keyword search.`);
          mode = 'keyword';
        } else {
          vector = await provider.embedQuery(request.query);
        }
      }

      let ranked: RankedHit[];
      if (mode === 'keyword') {
        ranked = phraseFirst(
          (await (keywordRanking ?? deps.documents.keywordSearch(base))).map((hit) => ({ hit, score: hit.score })),
          request.query,
        );
      } else if (mode === 'semantic') {
        ranked = (await deps.documents.vectorSearch({ ...base, vector: vector as Float32Array })).map((hit) => ({
          hit,
          score: hit.score,
        }));
      } else {
        const [keyword, semantic] = await Promise.all([
          keywordRanking ?? deps.documents.keywordSearch(base),
          deps.documents.vectorSearch({ ...base, vector: vector as Float32Array }),
        ]);
        ranked = phraseFirst(fuseScores(keyword, semantic, request.weights ?? deps.defaultWeights), request.query);
      }
      if (ctx.scope) ranked = await visibleHits(deps.documents, ctx.workspaceId, ctx.scope, ranked);
      if (request.minScore !== undefined) {
        const min = request.minScore;
        ranked = ranked.filter((r) => r.score >= min);
      }
      // Only the page is grouped: a chunk below it cannot change what the page shows.
      ranked = collapse(ranked, request.groupBy ?? 'passage', request.limit);
      const highlight = highlighter(queryTerms(request.query));
      const results: SearchResultView[] = ranked.map(({ hit, score }) => ({
        chunk_id: hit.chunk.id,
        document_id: hit.chunk.documentId,
        document_name: hit.documentName,
        version: hit.chunk.version,
        index: hit.chunk.index,
        score: Math.round(score * 1e6) / 1e6,
        content: hit.chunk.content,
        highlights: highlight(hit.chunk.content),
        metadata: hit.documentMetadata,
        page: hit.chunk.page,
      }));
      return {
        query: request.query,
        mode: request.mode,
        as_of: asOf ?? (request.asOf ? toIso(request.asOf) : null),
        results,
        took_ms: Math.round((performance.now() - started) * 100) / 100,
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    },
  };
}

/**
 * The hits a scope lets through, checked hit by hit with the predicate document reads use (the
 * store already applied the scope's filters; its sources it cannot, and this check does not
 * trust the store alone). The documents are read once each, deleted ones too (`as_of`).
 */
async function visibleHits(
  documents: DocumentStore,
  workspaceId: string,
  scope: AccessScope,
  ranked: RankedHit[],
): Promise<RankedHit[]> {
  const ids = [...new Set(ranked.map((r) => r.hit.chunk.documentId))];
  const facts = new Map(
    await Promise.all(ids.map(async (id) => [id, await documentFacts(documents, workspaceId, id)] as const)),
  );
  return ranked.filter(({ hit }) => {
    const doc = facts.get(hit.chunk.documentId);
    if (!doc || hit.chunk.workspaceId !== workspaceId) return false;
    return versionVisible(scope, {
      documentId: hit.chunk.documentId,
      source: doc.source,
      documentCreatedAt: doc.createdAt,
      mimeType: hit.mimeType,
      metadata: hit.documentMetadata,
    });
  });
}

export function queryTerms(query: string): string[] {
  return [
    ...new Set(
      normaliseWords(query)
        .split(' ')
        .filter((w) => w.length > 1),
    ),
  ];
}

/**
 * Up to three snippets around query terms, terms wrapped in `<em>`. The text is HTML-escaped
 * (`&`, `<`, `>`, `"`, `'`), so the markers are the only markup and a snippet can be shown as HTML.
 */
export function highlights(content: string, terms: readonly string[], max = 3, radius = 80): string[] {
  return highlighter(terms, max, radius)(content);
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** Runs of letters and digits: the words `queryTerms` takes from a query. */
const WORD = /[\p{L}\p{N}]+/gu;

/** Start and end of every word of `content` that is in `wanted` (lower-case words), in text order. */
function matchingWords(content: string, wanted: ReadonlySet<string>): [number, number][] {
  const lower = content.toLowerCase();
  const found: [number, number][] = [];
  if (lower.length === content.length) {
    for (const term of wanted) {
      for (let at = lower.indexOf(term); at !== -1; at = lower.indexOf(term, at + 1)) {
        if (wholeWordAt(lower, term, at)) found.push([at, at + term.length]);
      }
    }
  } else {
    // Lower-casing moved the offsets (a few letters grow): compare word by word.
    WORD.lastIndex = 0;
    for (let m = WORD.exec(content); m !== null; m = WORD.exec(content)) {
      if (wanted.has(m[0].toLowerCase())) found.push([m.index, m.index + m[0].length]);
    }
  }
  return found.sort((a, b) => a[0] - b[0]);
}

/**
 * {@link highlights} for many texts and the same terms (words, as `queryTerms` gives them). A term
 * matches a whole word of the text, case aside: it is found with `indexOf` in the lower-cased text
 * and kept where no letter or digit touches it. A pattern built from each query's terms
 * (case-insensitive, Unicode classes) costs about half a millisecond to compile, and V8 drops
 * compiled patterns when it collects garbage, so a busy service paid that on nearly every request.
 */
export function highlighter(terms: readonly string[], max = 3, radius = 80): (content: string) => string[] {
  if (terms.length === 0) return () => [];
  const wanted = new Set(terms.map((t) => t.toLowerCase()));
  return (content) => {
    const found = matchingWords(content, wanted);
    const snippets: string[] = [];
    let lastEnd = -1;
    for (const [at, atEnd] of found) {
      if (snippets.length >= max) break;
      if (at < lastEnd) continue;
      const start = Math.max(0, at - radius);
      const end = Math.min(content.length, atEnd + radius);
      let text = '';
      let position = start;
      for (const [from, to] of found) {
        if (from < start || to > end) continue;
        text += `${escapeHtml(content.slice(position, from))}<em>${escapeHtml(content.slice(from, to))}</em>`;
        position = to;
      }
      text = (text + escapeHtml(content.slice(position, end))).replace(/\s+/g, ' ').trim();
      snippets.push(`${start > 0 ? '…' : ''}${text}${end < content.length ? '…' : ''}`);
      lastEnd = end;
    }
    return snippets;
  };
}
