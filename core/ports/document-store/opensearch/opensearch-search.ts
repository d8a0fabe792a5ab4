import type { SearchFilters } from '../../../model/search-filters.model.ts';
import { canonicalTime } from '../stored-records.ts';
import type { Json } from './opensearch-http.ts';
import { metadataToken } from './opensearch-records.ts';

/**
 * Restricts chunks to the versions served at `asOf` (null: now), from the served interval each
 * chunk copies from its version: served from `served_from` (inclusive) to `served_until`
 * (exclusive, missing while open). Deletion closes the interval, so deleted documents drop out of
 * current search on their own and stay visible to earlier instants.
 */
export function servedAtClauses(asOf: string | null): Json[] {
  if (asOf === null) {
    return [{ exists: { field: 'served_from' } }, { bool: { must_not: [{ exists: { field: 'served_until' } }] } }];
  }
  const at = canonicalTime(asOf, 'asOf');
  return [
    { range: { served_from: { lte: at } } },
    {
      bool: {
        should: [
          { bool: { must_not: [{ exists: { field: 'served_until' } }] } },
          { range: { served_until: { gt: at } } },
        ],
        minimum_should_match: 1,
      },
    },
  ];
}

/**
 * Filter clauses of a chunk search: the workspace and every given filter. An empty list
 * (`documentIds: []`, `mimeTypes: []`, a metadata key without values) does not restrict.
 * `createdAfter` is inclusive and `createdBefore` exclusive, on the document's creation time;
 * metadata values match the version's metadata type-exactly, list values by element.
 */
export function searchFilterClauses(workspaceId: string, filters: SearchFilters): Json[] {
  const clauses: Json[] = [{ term: { workspace_id: workspaceId } }];
  if (filters.documentIds && filters.documentIds.length > 0) {
    clauses.push({ terms: { document_id: [...filters.documentIds] } });
  }
  if (filters.mimeTypes && filters.mimeTypes.length > 0) {
    clauses.push({ terms: { v_mime_type: [...filters.mimeTypes] } });
  }
  const created: Json = {};
  if (filters.createdAfter !== undefined) created.gte = canonicalTime(filters.createdAfter, 'createdAfter');
  if (filters.createdBefore !== undefined) created.lt = canonicalTime(filters.createdBefore, 'createdBefore');
  if (Object.keys(created).length > 0) clauses.push({ range: { d_created_at: created } });
  for (const [key, values] of Object.entries(filters.metadata ?? {})) {
    if (values.length === 0) continue;
    const tokens = values
      .filter((value) => typeof value !== 'number' || Number.isFinite(value))
      .map((value) => metadataToken(key, value));
    // No usable value (only NaN/Infinity): nothing can match.
    clauses.push(tokens.length === 0 ? { match_none: {} } : { terms: { v_metadata_kv: tokens } });
  }
  return clauses;
}

/** Whether the text has a word for the keyword query (letters, digits, combining marks). */
export function hasWords(text: string): boolean {
  return /[\p{L}\p{N}\p{M}]/u.test(text);
}

/** Converts a Lucene `cosinesimil` score, `(1 + cos) / 2`, back to the cosine similarity. */
export function cosineFromScore(score: number): number {
  return Math.max(-1, Math.min(1, 2 * score - 1));
}
