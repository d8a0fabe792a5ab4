import type { IndexModel, VersionRecord } from '../../../model/document-records.model.ts';
import type { DocumentSnapshot, DocumentTransfer, StoredChunk, StoredDocument } from '../document-store.port.ts';
import { canonicalTime, toChunkRecord, toStoredProgress, toVersionRecord } from '../stored-records.ts';
import { createChunkWriter } from './opensearch-chunks.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import { type BulkAction, type Json, requireBulkSuccess } from './opensearch-http.ts';
import { vectorField } from './opensearch-mappings.ts';
import {
  type ChunkSource,
  type DocumentSource,
  servedInterval,
  type VersionSource,
  versionId,
  versionIdsUpTo,
} from './opensearch-records.ts';

const time = (value: string | null, field: string) => (value === null ? null : canonicalTime(value, field));

function storedDocument(source: DocumentSource): StoredDocument {
  return {
    id: source.id,
    workspaceId: source.workspace_id,
    source: source.source,
    ...(typeof source.source_item === 'string' ? { sourceItem: source.source_item } : {}),
    createdAt: source.created_at,
    updatedAt: source.updated_at,
    deletedAt: source.deleted_at ?? null,
    latestVersion: source.latest_version,
    servedVersion: source.served_version ?? null,
  };
}

function versionSource(v: VersionRecord, rev: number): VersionSource {
  return {
    document_id: v.documentId,
    workspace_id: v.workspaceId,
    version: v.version,
    status: v.status,
    name: v.name,
    mime_type: v.mimeType,
    size_bytes: v.sizeBytes,
    content_hash: v.contentHash,
    storage_key: v.storageKey,
    metadata: v.metadata ?? {},
    change_reason: v.changeReason,
    restored_from: v.restoredFrom,
    created_by: v.createdBy,
    created_at: canonicalTime(v.createdAt, 'createdAt'),
    completed_at: time(v.completedAt, 'completedAt'),
    served_from: time(v.servedFrom, 'servedFrom'),
    served_until: time(v.servedUntil, 'servedUntil'),
    served_rev: rev,
    chunk_count: v.chunkCount,
    tokens: v.tokens,
    embedding_model: v.embeddingModel,
    error: v.error,
    progress: toStoredProgress(v.progress),
    archived_at: time(v.archivedAt, 'archivedAt'),
  };
}

/**
 * The {@link DocumentTransfer} role of the OpenSearch document store. OpenSearch has no read
 * transaction, so a snapshot is not exact: it reads the indexes as they are and the caller cuts
 * the records at the snapshot's `at`. A version's served interval is taken from its document's
 * serving history (the authority), not from the copy on the version record. Imports are written
 * without a refresh (each would cut a segment and build its vector graph); `finishImport` refreshes
 * the indexes once.
 */
export function createOpenSearchTransfer(context: OpenSearchContext): DocumentTransfer {
  const { names } = context;
  const { putChunks } = createChunkWriter(context);

  async function openSnapshot(): Promise<DocumentSnapshot> {
    const at = new Date().toISOString();
    const indexModel: IndexModel | null = await context.readIndexModel();
    return {
      at,
      exact: false,
      indexModel,
      async documents(afterId, limit) {
        const body: Json = { query: { match_all: {} }, sort: [{ id: 'asc' }], size: limit, track_total_hits: false };
        if (afterId !== '') body.search_after = [afterId];
        await context.refreshIndexes([names.documents]);
        const hits = (await context.search<DocumentSource>(names.documents, body, true)).hits.hits;
        const documents = hits.flatMap((hit) => (hit._source === undefined ? [] : [hit._source]));
        const ids = documents.flatMap((d) => versionIdsUpTo(d.id, d.latest_version));
        const versions = ids.length === 0 ? new Map() : await context.mget<VersionSource>(names.versions, ids);
        return documents.map((document) => ({
          document: storedDocument(document),
          versions: versionIdsUpTo(document.id, document.latest_version).flatMap((id) => {
            const source = versions.get(id) as VersionSource | undefined;
            if (source === undefined) return [];
            const interval = servedInterval(document, source.version);
            return [toVersionRecord({ ...source, served_from: interval.from, served_until: interval.until })];
          }),
        }));
      },
      async chunks(documentId, version): Promise<StoredChunk[]> {
        const hits = await context.scanAll<ChunkSource>(
          names.chunks,
          context.versionChunksQuery(documentId, version),
          [{ idx: 'asc' }],
          true,
        );
        return hits.flatMap((hit) => {
          const source = hit._source;
          if (source === undefined) return [];
          const fields = source as unknown as Record<string, unknown>;
          const values = indexModel === null ? undefined : fields[vectorField(indexModel.dimensions)];
          const vector = source.model !== null && Array.isArray(values) ? Float32Array.from(values) : null;
          return [{ ...toChunkRecord(source), vector, model: vector === null ? null : source.model }];
        });
      },
      async close() {},
    };
  }

  return {
    openSnapshot,

    async importDocument(document, versions) {
      const existing = await context.getDocument(document.id);
      if (existing !== null) {
        await context.deleteMatching(names.chunks, { term: { document_id: document.id } }, [{ id: 'asc' }]);
        await context.deleteIds(names.versions, versionIdsUpTo(document.id, existing.source.latest_version));
      }
      const latest = versions.find((v) => v.version === document.latestVersion) ?? versions[versions.length - 1];
      const rev = (existing?.source.rev ?? 0) + 1;
      const served = versions
        .filter((v) => v.servedFrom !== null)
        .sort((a, b) => a.version - b.version)
        .map((v) => ({ version: v.version, from: canonicalTime(v.servedFrom!, 'servedFrom') }));
      const source: DocumentSource = {
        id: document.id,
        workspace_id: document.workspaceId,
        source: document.source,
        source_item: document.sourceItem ?? null,
        created_at: canonicalTime(document.createdAt, 'createdAt'),
        updated_at: canonicalTime(document.updatedAt, 'updatedAt'),
        deleted_at: time(document.deletedAt, 'deletedAt'),
        latest_version: document.latestVersion,
        served_version: document.servedVersion,
        status: latest?.status ?? 'pending',
        rev,
        served,
      };
      const actions = versions.map(
        (v): BulkAction => ({
          kind: 'index',
          index: names.versions,
          id: versionId(v.documentId, v.version),
          source: versionSource(v, rev) as unknown as Json,
        }),
      );
      const results = await context.bulk(actions, false);
      requireBulkSuccess(results, `import the versions of ${document.id}`);
      await context.put(names.documents, document.id, source, null, 'later');
    },

    async importChunks(chunks) {
      await putChunks(chunks, false);
    },

    async finishImport() {
      await context.refreshIndexes([names.documents, names.versions, names.chunks, names.vectorCache]);
    },
  };
}
