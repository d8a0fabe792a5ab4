import type { PendingVersions } from '../document-store.port.ts';
import { canonicalTime, toVersionRecord } from '../stored-records.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import type { VersionSource } from './opensearch-records.ts';

/** The {@link PendingVersions} role of the OpenSearch document store: a search of the versions index. */
export function createOpenSearchPendingVersions(context: OpenSearchContext): PendingVersions {
  const { names, search, refreshIndexes } = context;
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
  };
}
