import type { StoreSearchQuery } from '../document-store.port.ts';

/** Candidates asked for beyond what the expected share of passing ones needs: a fifth more. */
const MARGIN = 1.2;
/** Weight of the newest observation in a kind's passing share (the rest is its earlier estimate). */
const NEWEST_WEIGHT = 0.5;
/**
 * Share of candidates assumed to pass before a query of its kind has been seen: a first ask of
 * twice what is needed.
 */
const FIRST_SHARE = 0.6;
/** Kinds of query remembered at most; beyond it the memory starts again. */
const MAX_KINDS = 10_000;

/**
 * How many candidates to ask an index for, so that `limit` of them pass the checks in SQL (the
 * served interval at `as_of`, the workspace and every filter) in one round, and no more are read.
 *
 * Each round reads its candidates' rows, so asking for twice the limit (as a fixed rule would)
 * doubles the cost of the common query, where nearly every candidate passes. Instead the pool
 * remembers, per kind of query (workspace, `as_of` now or in the past, and the filters), the share
 * of candidates that passed lately, and asks for `limit × 1.2 ÷ share`. The first query of a kind
 * asks for twice what is needed. A round that finds too few still grows its ask fourfold (the
 * callers' loops): the pool saves work and never costs a result.
 */
export function createCandidatePool() {
  const shares = new Map<string, number>();
  return {
    /**
     * Candidates for `limit` passing ones of `query`. `reach` is the share of the index's candidates
     * that can be the query's at all (the workspace's share of an index over every workspace; 1 for
     * an index that answers for the workspace only), for a kind not seen yet; `expected`, when
     * known, is the share expected to pass for a kind not seen yet (it replaces the guess from `reach`).
     */
    size(query: StoreSearchQuery, limit: number, reach = 1, expected?: number): number {
      const share = shares.get(kindOf(query)) ?? expected ?? FIRST_SHARE * reach;
      return Math.ceil((limit * MARGIN) / Math.min(1, Math.max(share, 1e-6)));
    },
    /** The share of candidates of `query`'s kind that passed lately; undefined before one was seen. */
    share(query: StoreSearchQuery): number | undefined {
      return shares.get(kindOf(query));
    },
    /** Records that `passed` of `checked` candidates of `query` passed the checks. */
    observe(query: StoreSearchQuery, checked: number, passed: number): void {
      if (checked <= 0) return;
      const key = kindOf(query);
      const observed = passed / checked;
      const earlier = shares.get(key);
      if (earlier === undefined && shares.size >= MAX_KINDS) shares.clear();
      shares.set(key, earlier === undefined ? observed : NEWEST_WEIGHT * observed + (1 - NEWEST_WEIGHT) * earlier);
    },
  };
}

/** A query's kind: what decides which candidates pass, apart from the text or vector. */
function kindOf(query: StoreSearchQuery): string {
  const filters = query.filters;
  const filtered =
    (filters.documentIds?.length ?? 0) > 0 ||
    (filters.mimeTypes?.length ?? 0) > 0 ||
    filters.createdAfter !== undefined ||
    filters.createdBefore !== undefined ||
    Object.values(filters.metadata ?? {}).some((values) => values.length > 0);
  return `${query.workspaceId}\u0000${query.asOf === null ? 'now' : 'past'}\u0000${filtered ? JSON.stringify(filters) : ''}`;
}
