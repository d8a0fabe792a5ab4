import type { PendingVersions } from '../document-store.port.ts';
import { canonicalTime, toVersionRecord } from '../stored-records.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import type { VersionSource } from './opensearch-records.ts';

/** Most workspaces one backlog count tells apart (a terms aggregation's size). */
const MAX_WORKSPACES = 10_000;

interface WorkspaceBuckets {
  readonly by_workspace?: { readonly buckets: readonly { readonly key: string; readonly doc_count: number }[] };
}

const byWorkspace = (aggregation: unknown): Record<string, number> =>
  Object.fromEntries(
    ((aggregation as WorkspaceBuckets | undefined)?.by_workspace?.buckets ?? []).map((b) => [b.key, b.doc_count]),
  );

/**
 * The {@link PendingVersions} role of the OpenSearch document store: searches and aggregations
 * of the versions index.
 */
export function createOpenSearchPendingVersions(context: OpenSearchContext): PendingVersions {
  const { names, search, refreshIndexes } = context;
  const unfinished = { terms: { status: ['pending', 'processing'] } };
  const perWorkspace = { by_workspace: { terms: { field: 'workspace_id', size: MAX_WORKSPACES } } };
  return {
    async listPendingVersions(createdBefore, limit) {
      const before = canonicalTime(createdBefore, 'createdBefore');
      // Versions are written without a refresh (they are read by id elsewhere): this occasional
      // search refreshes first, so it sees every version written before it.
      await refreshIndexes([names.versions]);
      const body = await search<VersionSource>(names.versions, {
        size: limit,
        query: {
          bool: { filter: [{ term: { status: 'pending' } }, { range: { created_at: { lt: before } } }] },
        },
        sort: [{ created_at: 'asc' }, { document_id: 'asc' }, { version: 'asc' }],
      });
      return body.hits.hits.flatMap((hit) => (hit._source ? [toVersionRecord(hit._source)] : []));
    },

    async countBacklog(completedSince) {
      const since = canonicalTime(completedSince, 'completedSince');
      const completed = { range: { completed_at: { gte: since } } };
      // As above: a refresh first (shared with concurrent callers), so every version written by
      // any process before the call is counted; one search answers both counts.
      await refreshIndexes([names.versions]);
      const body = await search<never>(names.versions, {
        size: 0,
        track_total_hits: false,
        query: { bool: { should: [unfinished, completed], minimum_should_match: 1 } },
        aggs: {
          unfinished: { filter: unfinished, aggs: perWorkspace },
          completed: { filter: completed, aggs: perWorkspace },
        },
      });
      return {
        unfinished: byWorkspace(body.aggregations?.unfinished),
        completed: byWorkspace(body.aggregations?.completed),
      };
    },
  };
}
