import type { DocumentListQuery } from '../ports/document-store/document-store.port.ts';

/** Most filter combinations remembered; past it the cache starts over (a bound, not an LRU). */
const MAX_ENTRIES = 10_000;

type Filters = Pick<DocumentListQuery, 'workspaceId' | 'status' | 'source' | 'createdAfter' | 'createdBefore'>;

/**
 * The list's `total` per workspace and filters, kept under the document store's change mark it
 * was counted at: paging through a list counts once, not on every page, and any write (the mark
 * moves) makes the next page count again.
 */
export interface ListTotalCache {
  /** The total of `filters` counted under `mark`, or undefined. */
  get(filters: Filters, mark: string): number | undefined;
  set(filters: Filters, mark: string, total: number): void;
}

export function createListTotalCache(): ListTotalCache {
  const entries = new Map<string, { mark: string; total: number }>();
  const keyOf = (f: Filters) =>
    JSON.stringify([
      f.workspaceId,
      f.status ?? null,
      f.source ?? null,
      f.createdAfter ?? null,
      f.createdBefore ?? null,
    ]);
  return {
    get(filters, mark) {
      const entry = entries.get(keyOf(filters));
      return entry !== undefined && entry.mark === mark ? entry.total : undefined;
    },
    set(filters, mark, total) {
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(keyOf(filters), { mark, total });
    },
  };
}
