import type { DocumentRecord } from '../../../model/document-records.model.ts';
import type { SourceItemKey, VersionStore } from '../document-store.port.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import { type DocumentSource, toDocumentRecord, type VersionSource, versionId } from './opensearch-records.ts';

/**
 * `lookupSourceItems` of the OpenSearch document store: one scan of the documents index by the
 * given sources and items (terms queries, so the pair count is not bound by the boolean clause
 * limit), keeping the exact pairs, then one multi-get of their latest versions.
 */
export function createOpenSearchSourceItemLookup(context: OpenSearchContext): Pick<VersionStore, 'lookupSourceItems'> {
  const { names, scanAll, mget } = context;
  return {
    async lookupSourceItems(workspaceId: string, items: readonly SourceItemKey[]): Promise<DocumentRecord[]> {
      if (items.length === 0) return [];
      const wanted = new Set(items.map((item) => JSON.stringify([item.source, item.sourceItem])));
      const query = {
        bool: {
          filter: [
            { term: { workspace_id: workspaceId } },
            { terms: { source: [...new Set(items.map((item) => item.source))] } },
            { terms: { source_item: [...new Set(items.map((item) => item.sourceItem))] } },
          ],
          must_not: [{ exists: { field: 'deleted_at' } }],
        },
      };
      const sort = [{ source: 'asc' }, { source_item: 'asc' }, { created_at: 'asc' }, { id: 'asc' }];
      const hits = await scanAll<DocumentSource>(names.documents, query, sort, true);
      const sources = hits.flatMap((hit) =>
        hit._source !== undefined && wanted.has(JSON.stringify([hit._source.source, hit._source.source_item]))
          ? [hit._source]
          : [],
      );
      if (sources.length === 0) return [];
      const latest = await mget<VersionSource>(
        names.versions,
        sources.map((source) => versionId(source.id, source.latest_version)),
      );
      return sources.flatMap((source) => {
        const version = latest.get(versionId(source.id, source.latest_version));
        return version === undefined ? [] : [toDocumentRecord(source, version)];
      });
    },
  };
}
