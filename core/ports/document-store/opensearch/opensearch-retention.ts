import { KbError } from '../../../errors/kb-error.ts';
import type { RetentionStore } from '../document-store.port.ts';
import { canonicalTime, toVersionRecord } from '../stored-records.ts';
import { BY_CHUNK_ID, type OpenSearchContext, SCAN_PAGE } from './opensearch-context.ts';
import type { Json } from './opensearch-http.ts';
import { servedInterval, type VersionSource, versionId } from './opensearch-records.ts';

const ARCHIVE_SCRIPT = `
  if (ctx._source.archived_at == null) { ctx._source.archived_at = params.at; } else { ctx.op = 'noop'; }`;

/**
 * The {@link RetentionStore} role of the OpenSearch document store: archiving deletes a version's
 * chunks and stamps the version record.
 */
export function createOpenSearchRetentionStore(context: OpenSearchContext): RetentionStore {
  const {
    names,
    getDocument,
    getVersionSource,
    update,
    search,
    scanAll,
    versionChunksQuery,
    deleteMatching,
    refreshIndexes,
  } = context;
  return {
    async listExpiredVersions(workspaceId, cutoff) {
      const before = canonicalTime(cutoff, 'cutoff');
      // Completions write the served intervals of versions without a refresh (they are read by
      // id elsewhere): this occasional sweep refreshes before it searches them.
      await refreshIndexes([names.versions]);
      const hits = await scanAll<VersionSource>(
        names.versions,
        {
          bool: {
            filter: [{ term: { workspace_id: workspaceId } }, { range: { served_until: { lt: before } } }],
            must_not: [{ exists: { field: 'archived_at' } }],
          },
        },
        [{ served_until: 'asc' }, { document_id: 'asc' }, { version: 'asc' }],
        true,
      );
      return hits.flatMap((hit) => (hit._source === undefined ? [] : [toVersionRecord(hit._source)]));
    },

    async archiveVersion(documentId, version, at) {
      const when = canonicalTime(at, 'at');
      const current = await getVersionSource(documentId, version);
      if (current === null) return;
      const document = await getDocument(documentId);
      const interval =
        document === null
          ? { from: current.served_from, until: current.served_until }
          : servedInterval(document.source, version);
      if (interval.from !== null && interval.until === null) {
        throw new KbError('conflict', `Version ${version} of ${documentId} is served now and cannot be archived`, {
          retriable: false,
        });
      }
      await deleteMatching(names.chunks, versionChunksQuery(documentId, version), BY_CHUNK_ID);
      await update(names.versions, versionId(documentId, version), {
        script: { lang: 'painless', source: ARCHIVE_SCRIPT, params: { at: when } },
      });
    },

    async archivedHorizon(workspaceId) {
      const body = await search<VersionSource>(names.versions, {
        query: {
          bool: {
            filter: [
              { term: { workspace_id: workspaceId } },
              { exists: { field: 'archived_at' } },
              { exists: { field: 'served_until' } },
            ],
          },
        },
        sort: [{ served_until: 'desc' }],
        size: 1,
        _source: ['served_until'],
      });
      return body.hits.hits[0]?._source?.served_until ?? null;
    },

    async listWorkspaces() {
      const workspaces: string[] = [];
      let after: Json | undefined;
      for (;;) {
        const body = await search<never>(names.documents, {
          size: 0,
          aggs: {
            workspaces: {
              composite: {
                size: SCAN_PAGE,
                sources: [{ workspace: { terms: { field: 'workspace_id' } } }],
                ...(after === undefined ? {} : { after }),
              },
            },
          },
        });
        const aggregation = body.aggregations?.workspaces as
          | { buckets: { key: { workspace: string } }[]; after_key?: Json }
          | undefined;
        const buckets = aggregation?.buckets ?? [];
        workspaces.push(...buckets.map((bucket) => bucket.key.workspace));
        if (buckets.length < SCAN_PAGE || aggregation?.after_key === undefined) return workspaces;
        after = aggregation.after_key;
      }
    },
  };
}
