import type { SearchFilters } from '../../../model/search-filters.model.ts';
import type { Database } from '../../sqlite/open-database.ts';
import type { StoreSearchQuery } from '../document-store.port.ts';
import { servedAt, versionConditions } from './sqlite-search.ts';

/** The versions a filtered query can find chunks in: those served at its `as_of` that pass every filter. */
export interface PassingVersions {
  /** `[document id, version]` of each passing version, as JSON (the driven scans' parameter). */
  readonly json: string;
  /** The passing versions' documents. */
  readonly documentIds: string[];
  /** Their chunks (the versions' recorded chunk counts): what an exact scan of them reads. */
  readonly chunks: number;
}

/** Whether a filter restricts anything (an empty list or a key with no values does not). */
export function hasFilters(filters: SearchFilters): boolean {
  return (
    (filters.documentIds?.length ?? 0) > 0 ||
    (filters.mimeTypes?.length ?? 0) > 0 ||
    filters.createdAfter !== undefined ||
    filters.createdBefore !== undefined ||
    Object.values(filters.metadata ?? {}).some((values) => values.length > 0)
  );
}

/**
 * Whether planning from the passing versions can pay for a query: it has a filter, or looks into
 * the past (`as_of`), and its kind was not seen passing most of the index's candidates (`share`,
 * from the candidate pool; undefined before the first query of the kind).
 */
export function worthPlanning(query: StoreSearchQuery, share: number | undefined): boolean {
  if (!hasFilters(query.filters) && query.asOf === null) return false;
  return share === undefined || share < PLAN_BELOW_SHARE;
}

/** Above this share of passing candidates the index's nearest/best ones serve a filter directly. */
const PLAN_BELOW_SHARE = 0.2;

/**
 * Reads the versions that a query's served interval and filters pass — a query over versions and
 * documents only (every filter is on the version or its document), quick next to reading chunks —
 * so a selective filter can drive its search from those versions' chunks, and a search can know
 * how many chunks can pass at all.
 */
export function createPassingVersions(db: Database) {
  return function passingVersions(query: StoreSearchQuery): PassingVersions {
    const served = servedAt(query.asOf);
    const conditions = versionConditions(query.workspaceId, query.filters);
    const rows = db
      .prepare(
        `SELECT v.document_id AS documentId, v.version AS version, v.chunk_count AS chunks
         FROM versions v JOIN documents d ON d.id = v.document_id
         WHERE ${served.sql} AND ${conditions.sql}`,
      )
      .all(...served.params, ...conditions.params) as Array<{ documentId: string; version: number; chunks: number }>;
    const documentIds = [...new Set(rows.map((row) => row.documentId))];
    return {
      json: JSON.stringify(rows.map((row) => [row.documentId, row.version])),
      documentIds,
      chunks: rows.reduce((sum, row) => sum + row.chunks, 0),
    };
  };
}
