import type { Database } from '../../sqlite/open-database.ts';
import type { SearchHit, StoreSearchQuery } from '../document-store.port.ts';
import { createCandidatePool } from './sqlite-candidate-pool.ts';
import { createPassingVersions, worthPlanning } from './sqlite-filter-plan.ts';
import type { KeywordIndex } from './sqlite-keyword-index.ts';
import { HIT_COLUMNS, type HitRow, toSearchHit } from './sqlite-rows.ts';
import { queryWords, searchConditions, servedAt } from './sqlite-search.ts';

/** Fewest candidates asked of the index, whatever the limit. */
const MIN_CANDIDATES = 100;
/** Most candidates asked of the index; a query that needs more takes the exact FTS5 path. */
const MAX_CANDIDATES = 10_000;
/**
 * Most chunks a filtered query's passing versions may hold for their documents to be handed to the
 * index as a pre-filter (its `document_id IN (…)`), so its best `k` are all of the filter's documents.
 */
const PREFILTER_AT_MOST = 20_000;

interface CandidateRow extends HitRow {
  readonly seq: number;
}

/**
 * Keyword search through the keyword index: the best `k` chunks of the workspace (and of the
 * filter's documents) from the index, then the served interval and every filter checked in SQL over
 * just those. The index answers with every change logged before the query began (it catches up
 * first), so every write that completed before the query is in the answer; a write landing while
 * it runs is concurrent with it, as it is for an FTS5 query (its rows are checked as they are now,
 * a chunk it adds may be missed). `k` starts at what the share of passing candidates seen in
 * queries of the same kind needs (`createCandidatePool`; at least {@link MIN_CANDIDATES}) and grows
 * fourfold while too few candidates pass and the index holds more. The kept candidates
 * are the best matching chunks, because a chunk the index did not return scores no higher than
 * every one it did.
 *
 * Resolves null — take the exact FTS5 path — when the database holds fewer than `exactBelow`
 * chunks (an FTS5 query scores every match in the database, which is quicker than the index's
 * fixed cost at that size; the index keeps following the database meanwhile, so it answers as soon
 * as the database grows past that), when the index cannot answer exactly now, or when `k` would
 * pass {@link MAX_CANDIDATES} (a filter that keeps a small part of the matches): a filtered query
 * never loses a matching result. Scores are the index's BM25 (higher is better).
 */
export function createIndexedKeywordSearch(
  db: Database,
  keywords: KeywordIndex,
  run: <T>(body: () => T) => T,
  exactBelow = 0,
) {
  const pool = createCandidatePool();
  const holdsAtLeast = createChunkCounter(db, keywords.lastChange);
  const passingVersions = createPassingVersions(db);
  return async function indexedKeywordSearch(query: StoreSearchQuery): Promise<SearchHit[] | null> {
    const limit = Math.floor(query.limit);
    if (!(limit > 0)) return [];
    const words = queryWords(query.text);
    if (words.length === 0) return [];
    if (exactBelow > 0 && !run(() => holdsAtLeast(exactBelow))) {
      keywords.keepUp();
      return null;
    }
    const served = servedAt(query.asOf);
    const conditions = searchConditions(query.workspaceId, query.filters);
    const check = db.prepare<unknown[], CandidateRow>(
      `SELECT c.seq, ${HIT_COLUMNS}
       FROM chunks c
       JOIN versions v ON v.document_id = c.document_id AND v.version = c.version
       JOIN documents d ON d.id = c.document_id
       WHERE c.seq IN (SELECT value FROM json_each(?)) AND ${served.sql} AND ${conditions.sql}`,
    );
    // A selective filter (or a look into the past): the passing versions' documents go to the index
    // as a pre-filter, so nearly every candidate passes. The pool learns only from queries without
    // one, where its share of passing candidates means what it says.
    let documentIds = query.filters.documentIds;
    let prefiltered = false;
    if (worthPlanning(query, pool.share(query))) {
      const passing = run(() => passingVersions(query));
      if (passing.documentIds.length === 0) return [];
      if (passing.chunks <= PREFILTER_AT_MOST) {
        documentIds = passing.documentIds;
        prefiltered = true;
      }
    }
    let k = prefiltered
      ? Math.max(Math.ceil(limit * 1.2), MIN_CANDIDATES)
      : Math.max(pool.size(query, limit), MIN_CANDIDATES);
    while (k <= MAX_CANDIDATES) {
      const matches = await keywords.search(words.join(' '), query.workspaceId, documentIds, k);
      if (matches === null) return null;
      const rows = run(() => check.all(JSON.stringify(matches.seqs), ...served.params, ...conditions.params));
      if (!prefiltered) pool.observe(query, matches.seqs.length, rows.length);
      if (rows.length >= limit || !matches.more) {
        const scores = new Map(matches.seqs.map((seq, i) => [seq, matches.scores[i] as number]));
        return rows
          .map((row) => ({ row, score: scores.get(row.seq) as number }))
          .sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0))
          .slice(0, limit)
          .map(({ row, score }) => toSearchHit(row, score));
      }
      k *= 4;
    }
    return null;
  };
}

/**
 * Whether the database holds at least `n` chunks, counted again only when the answer may have
 * changed: each logged keyword change (an insert, an update or a delete of one chunk) moves the
 * count by at most one, so a count taken at one log position settles the question until the log
 * has moved as far as the count is from `n`.
 */
export function createChunkCounter(db: Database, lastChange: () => number) {
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM chunks');
  let counted: { n: number; at: number } | null = null;
  return function holdsAtLeast(n: number): boolean {
    const at = lastChange();
    if (counted !== null && at >= counted.at) {
      const drift = at - counted.at;
      if (counted.n - drift >= n) return true;
      if (counted.n + drift < n) return false;
    }
    // The position is read first: a change landing before the count is counted and also allowed for.
    counted = { n: count.get()?.n ?? 0, at };
    return counted.n >= n;
  };
}
