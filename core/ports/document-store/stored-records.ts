import { KbError } from '../../errors/kb-error.ts';
import type {
  ChunkRecord,
  IndexModel,
  IngestError,
  IngestProgress,
  Metadata,
  VersionRecord,
  VersionStatus,
} from '../../model/document-records.model.ts';
import type { ChunkInput } from './document-store.port.ts';

/**
 * The stored (snake_case) fields of a version, as both adapters keep them, with `metadata` and
 * `error` already decoded. Fields written by later code may be absent from older stored
 * versions: {@link toVersionRecord} reads an absent one as its default.
 */
export interface StoredVersionFields {
  readonly document_id: string;
  readonly workspace_id: string;
  readonly version: number;
  readonly status: VersionStatus;
  readonly name: string;
  readonly mime_type: string;
  readonly size_bytes: number;
  readonly content_hash: string;
  readonly storage_key: string;
  readonly metadata: Metadata;
  readonly change_reason: string | null;
  readonly restored_from: number | null;
  readonly created_by: string;
  readonly created_at: string;
  readonly completed_at: string | null;
  readonly served_from: string | null;
  readonly served_until: string | null;
  readonly chunk_count: number;
  readonly tokens: number;
  readonly embedding_model: string | null;
  readonly error: IngestError | null;
  /** Absent on versions stored before progress was recorded. */
  readonly progress?: StoredProgress | null;
  readonly archived_at: string | null;
}

/** {@link IngestProgress} as stored. */
export interface StoredProgress {
  readonly stage: string;
  readonly chunks_done: number;
  readonly chunks_total: number;
}

export function toStoredProgress(progress: IngestProgress | null): StoredProgress | null {
  return progress === null
    ? null
    : { stage: progress.stage, chunks_done: progress.chunksDone, chunks_total: progress.chunksTotal };
}

/** The stored (snake_case) fields of a chunk, with `metadata` already decoded. */
export interface StoredChunkFields {
  readonly id: string;
  readonly document_id: string;
  readonly workspace_id: string;
  readonly version: number;
  readonly idx: number;
  readonly content: string;
  readonly content_hash: string;
  readonly tokens: number;
  readonly start_offset: number;
  readonly end_offset: number;
  readonly page: number | null;
  readonly metadata: Metadata;
}

/** The port's {@link VersionRecord} of stored version fields. */
export function toVersionRecord(source: StoredVersionFields): VersionRecord {
  return {
    documentId: source.document_id,
    workspaceId: source.workspace_id,
    version: source.version,
    status: source.status,
    name: source.name,
    mimeType: source.mime_type,
    sizeBytes: source.size_bytes,
    contentHash: source.content_hash,
    storageKey: source.storage_key,
    metadata: source.metadata ?? {},
    changeReason: source.change_reason ?? null,
    restoredFrom: source.restored_from ?? null,
    createdBy: source.created_by,
    createdAt: source.created_at,
    completedAt: source.completed_at ?? null,
    servedFrom: source.served_from ?? null,
    servedUntil: source.served_until ?? null,
    chunkCount: source.chunk_count ?? 0,
    tokens: source.tokens ?? 0,
    embeddingModel: source.embedding_model ?? null,
    error: source.error ?? null,
    progress: source.progress
      ? {
          stage: source.progress.stage,
          chunksDone: source.progress.chunks_done,
          chunksTotal: source.progress.chunks_total,
        }
      : null,
    archivedAt: source.archived_at ?? null,
  };
}

/** The port's {@link ChunkRecord} of stored chunk fields. */
export function toChunkRecord(source: StoredChunkFields): ChunkRecord {
  return {
    id: source.id,
    documentId: source.document_id,
    workspaceId: source.workspace_id,
    version: source.version,
    index: source.idx,
    content: source.content,
    contentHash: source.content_hash,
    tokens: source.tokens,
    startOffset: source.start_offset,
    endOffset: source.end_offset,
    page: source.page ?? null,
    metadata: source.metadata ?? {},
  };
}

/** The stored fields of a chunk to write (its vector and model are stored apart, per adapter). */
export function toStoredChunkFields(chunk: ChunkInput): StoredChunkFields {
  return {
    id: chunk.id,
    document_id: chunk.documentId,
    workspace_id: chunk.workspaceId,
    version: chunk.version,
    idx: chunk.index,
    content: chunk.content,
    content_hash: chunk.contentHash,
    tokens: chunk.tokens,
    start_offset: chunk.startOffset,
    end_offset: chunk.endOffset,
    page: chunk.page,
    metadata: chunk.metadata ?? {},
  };
}

/**
 * Canonical form of a timestamp: ISO 8601 UTC with milliseconds (`Date#toISOString`), so string
 * comparison is time comparison and records read back exactly as every adapter returns them.
 * Throws `bad-request` for an unparseable value.
 */
export function canonicalTime(value: string, field: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw new KbError('bad-request', `${field} is not a valid ISO 8601 timestamp: ${JSON.stringify(value)}`);
  }
  return new Date(time).toISOString();
}

/**
 * The index model a vector is written or searched under: throws `model-mismatch` when the index
 * has no model yet or the vector's dimension count differs from the model's.
 */
export function requireIndexModel(model: IndexModel | null, vector: Float32Array, what: string): IndexModel {
  if (model === null) {
    throw new KbError('model-mismatch', `${what}: the index has no embedding model yet (setIndexModel first)`);
  }
  if (vector.length !== model.dimensions) {
    throw new KbError(
      'model-mismatch',
      `${what}: vector has ${vector.length} dimensions, the index model ${model.model} has ${model.dimensions}`,
    );
  }
  return model;
}

/** The little-endian float32 bytes of a vector (a view on its memory, not a copy). */
export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A vector of little-endian float32 bytes, copied so the array is aligned and owned. */
export function bytesToVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
