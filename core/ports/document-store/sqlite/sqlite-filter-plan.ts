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

/**
 * The passing versions' chunks as a `FROM` source, `c` being the chunk: binds
 * {@link PassingVersions.json} at its place. Each version's chunks are read through the chunk index
 * by document and version.
 */
export const PASSING_CHUNKS = `json_each(?) p
  CROSS JOIN chunks c ON c.document_id = json_extract(p.value, '$[0]')
    AND c.version = json_extract(p.value, '$[1]')`;

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

/** Kinds of query whose passing versions are kept at most; beyond it the memory starts again. */
const MAX_PLANS = 256;

/**
 * Reads the versions that a query's served interval and filters pass — a query over versions and
 * documents only (every filter is on the version or its document), quick next to reading chunks —
 * so a selective filter can drive its search from those versions' chunks, and a search can know
 * how many chunks can pass at all.
 *
 * The answer is kept per kind of query (workspace, `as_of`, filters) until the database changes:
 * any commit of this connection (`total_changes()`) or of another one (`data_version`) reads it
 * again, so it is never older than the query's start, as a query's own SQL is.
 */
export function createPassingVersions(db: Database) {
  const stampOf = db.prepare<[], { changes: number }>('SELECT total_changes() AS changes');
  const plans = new Map<string, { stamp: string; plan: PassingVersions }>();
  return function passingVersions(query: StoreSearchQuery): PassingVersions {
    const key = JSON.stringify([query.workspaceId, query.asOf, query.filters]);
    const stamp = `${stampOf.get()?.changes ?? 0}:${db.pragma('data_version', { simple: true })}`;
    const kept = plans.get(key);
    if (kept !== undefined && kept.stamp === stamp) return kept.plan;
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
    const plan = {
      json: JSON.stringify(rows.map((row) => [row.documentId, row.version])),
      documentIds,
      chunks: rows.reduce((sum, row) => sum + row.chunks, 0),
    };
    if (kept === undefined && plans.size >= MAX_PLANS) plans.clear();
    plans.set(key, { stamp, plan });
    return plan;
  };
}
