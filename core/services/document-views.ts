import type { ChunkRecord, DocumentRecord, VersionRecord } from '../model/document-records.model.ts';
import type {
  ChunkView,
  DocumentListItemView,
  DocumentView,
  ProgressView,
  VersionDetailView,
  VersionView,
} from '../model/response-views.model.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';

const PROGRESS_STAGES: ReadonlySet<string> = new Set(['parse', 'chunk', 'embed', 'index']);

/** How far a `processing` version is (the parse stage until a stage records more), else undefined. */
function progressView(v: VersionRecord): ProgressView | undefined {
  if (v.status !== 'processing') return undefined;
  const p = v.progress;
  if (!p || !PROGRESS_STAGES.has(p.stage)) return { stage: 'parse', chunks_done: 0, chunks_total: 0 };
  return { stage: p.stage as ProgressView['stage'], chunks_done: p.chunksDone, chunks_total: p.chunksTotal };
}

export function listItemView(doc: DocumentRecord): DocumentListItemView {
  return {
    id: doc.id,
    document_id: doc.id,
    name: doc.latest.name,
    mime_type: doc.latest.mimeType,
    source: doc.source,
    status: doc.latest.status,
    version: doc.latestVersion,
    metadata: doc.latest.metadata,
    stats: { chunks: doc.latest.chunkCount, tokens: doc.latest.tokens },
    created_at: doc.createdAt,
    updated_at: doc.updatedAt,
  };
}

export function documentView(doc: DocumentRecord, objects: ObjectStore): DocumentView {
  const progress = progressView(doc.latest);
  return {
    ...listItemView(doc),
    workspace_id: doc.workspaceId,
    size_bytes: doc.latest.sizeBytes,
    content_hash: doc.latest.contentHash,
    storage_url: objects.url(doc.latest.storageKey),
    served_version: doc.servedVersion,
    error: doc.latest.error,
    ...(progress === undefined ? {} : { progress }),
  };
}

export function versionView(v: VersionRecord): VersionView {
  return {
    version: v.version,
    created_at: v.createdAt,
    created_by: v.createdBy,
    size_bytes: v.sizeBytes,
    chunk_count: v.chunkCount,
    status: v.status,
    change_reason: v.changeReason,
    restored_from: v.restoredFrom,
    content_hash: v.contentHash,
    name: v.name,
    mime_type: v.mimeType,
    tokens: v.tokens,
    served_from: v.servedFrom,
    served_until: v.servedUntil,
    archived: v.archivedAt !== null,
    error: v.error,
  };
}

export function versionDetailView(v: VersionRecord, objects: ObjectStore): VersionDetailView {
  return { ...versionView(v), metadata: v.metadata, storage_url: objects.url(v.storageKey) };
}

export function chunkView(c: ChunkRecord): ChunkView {
  return {
    id: c.id,
    index: c.index,
    content: c.content,
    tokens: c.tokens,
    start_offset: c.startOffset,
    end_offset: c.endOffset,
    page: c.page,
    metadata: c.metadata,
  };
}
