import type { DocumentRecord, Metadata, VersionStatus } from '../../../model/document-records.model.ts';
import type { NewVersion } from '../document-store.port.ts';
import {
  bytesToVector,
  canonicalTime,
  type StoredChunkFields,
  type StoredVersionFields,
  toVersionRecord,
  vectorBytes,
} from '../stored-records.ts';

/**
 * One entry of a document's serving history: `version` started being served at `from`. The list
 * is append-only, in version order; an entry ends where the next one starts, or at the deletion.
 */
export interface ServedEntry {
  readonly version: number;
  readonly from: string;
}

/**
 * `_source` of a document. It is the authority for version allocation (`latest_version`) and for
 * serving (`served`, `deleted_at`); every change bumps `rev`, which copies of the served intervals
 * on versions and chunks carry, so a late copy never overwrites a newer one.
 */
export interface DocumentSource {
  readonly id: string;
  readonly workspace_id: string;
  readonly source: string;
  /** The item within `source` it was created for; absent or null: none (records before the field). */
  readonly source_item?: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at: string | null;
  readonly latest_version: number;
  readonly served_version: number | null;
  /** The latest version's status, mirrored for list filters. */
  readonly status: VersionStatus;
  readonly rev: number;
  readonly served: readonly ServedEntry[];
  /** The write key of the request that deleted it (absent on documents stored before keys were). */
  readonly deleted_by?: string | null;
  /**
   * The notification of its deletion, pending until the message log took it (absent or null:
   * none); written with the deletion in one write.
   */
  readonly notification?: StoredNotification | null;
}

/** `_source` of a pending notification kept past its document's purge (the outbox index). */
export interface OutboxSource {
  readonly id: string;
  readonly workspace_id: string;
  readonly document_id: string;
  readonly at: string;
  readonly body: string;
}

/** A pending notification as a document record holds it. */
export interface StoredNotification {
  readonly id: string;
  /** The instant of the change it tells of. */
  readonly at: string;
  /** The notification as its caller encoded it. */
  readonly body: string;
}

/**
 * `_source` of a version: its stored fields, the `rev` of the document its served interval was
 * copied at, and the write key of the request that created it.
 */
export interface VersionSource extends StoredVersionFields {
  readonly served_rev: number;
  /** Absent on versions stored before keys were. */
  readonly write_key?: string | null;
}

/** The fields a chunk copies from its version and document (see {@link derivedChunkFields}). */
export interface DerivedChunkFields {
  readonly served_from: string | null;
  readonly served_until: string | null;
  readonly served_rev: number;
  readonly v_name: string | null;
  readonly v_mime_type: string | null;
  readonly v_metadata: Metadata;
  readonly v_metadata_kv: string[];
  readonly d_created_at: string | null;
}

export interface ChunkSource extends StoredChunkFields, DerivedChunkFields {
  /** The model of the stored vector, or null without one. */
  readonly model: string | null;
  /** The vector, under the field named after its dimension count (`vector_d<n>`). */
  readonly [vectorField: `vector_d${number}`]: number[] | undefined;
}

export interface VectorCacheSource {
  readonly model: string;
  readonly content_hash: string;
  /** Base64 of the little-endian float32 values. */
  readonly vector: string;
}

/** The later of two canonical timestamps (string order is time order for them). */
export function later(first: string, second: string | null): string {
  return second !== null && second > first ? second : first;
}

/** Id of a version document. */
export function versionId(documentId: string, version: number): string {
  return `${documentId}:${version}`;
}

/** Ids of versions 1 … `last` of a document. */
export function versionIdsUpTo(documentId: string, last: number): string[] {
  return Array.from({ length: last }, (_, i) => versionId(documentId, i + 1));
}

/** Id of a chunk: `<document_id>:<version>:<index>`. */
export function chunkId(documentId: string, version: number, index: number): string {
  return `${documentId}:${version}:${index}`;
}

/**
 * Token of one metadata filter value: the JSON of `[key, value]`, unambiguous whatever the key
 * holds and type-exact (`"2024"` and `2024` differ).
 */
export function metadataToken(key: string, value: string | number | boolean): string {
  return JSON.stringify([key, value]);
}

function isScalar(value: unknown): value is string | number | boolean {
  return (
    typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
  );
}

/**
 * Filter tokens of version metadata: one per scalar value, and one per scalar element of a list
 * value (a list matches when one of its elements does). Objects and nulls are not filterable.
 */
export function metadataTokens(metadata: Metadata): string[] {
  const tokens = new Set<string>();
  for (const [key, value] of Object.entries(metadata)) {
    if (isScalar(value)) tokens.add(metadataToken(key, value));
    else if (Array.isArray(value)) {
      for (const element of value) if (isScalar(element)) tokens.add(metadataToken(key, element));
    }
  }
  return [...tokens];
}

/** The interval a version was served in, according to its document, or nulls if never served. */
export function servedInterval(
  document: DocumentSource | null,
  version: number,
): { from: string | null; until: string | null } {
  if (document === null) return { from: null, until: null };
  const position = document.served.findIndex((entry) => entry.version === version);
  const entry = document.served[position];
  if (entry === undefined) return { from: null, until: null };
  const next = document.served[position + 1];
  if (next !== undefined) return { from: entry.from, until: next.from };
  return { from: entry.from, until: document.deleted_at === null ? null : later(document.deleted_at, entry.from) };
}

/**
 * What a chunk of version `version` copies from its document and version record (either may not
 * exist yet: chunks can be written before their version, and are then completed by a later sync).
 */
export function derivedChunkFields(
  document: DocumentSource | null,
  versionNumber: number,
  version: VersionSource | null,
): DerivedChunkFields {
  const interval = servedInterval(document, versionNumber);
  return {
    served_from: interval.from,
    served_until: interval.until,
    served_rev: document?.rev ?? 0,
    v_name: version?.name ?? null,
    v_mime_type: version?.mime_type ?? null,
    v_metadata: version?.metadata ?? {},
    v_metadata_kv: version === null ? [] : metadataTokens(version.metadata),
    d_created_at: document?.created_at ?? null,
  };
}

export function newVersionSource(
  documentId: string,
  workspaceId: string,
  version: number,
  input: NewVersion,
): VersionSource {
  return {
    document_id: documentId,
    workspace_id: workspaceId,
    version,
    status: 'pending',
    name: input.name,
    mime_type: input.mimeType,
    size_bytes: input.sizeBytes,
    content_hash: input.contentHash,
    storage_key: input.storageKey,
    metadata: input.metadata ?? {},
    change_reason: input.changeReason,
    restored_from: input.restoredFrom,
    created_by: input.createdBy,
    created_at: canonicalTime(input.createdAt, 'createdAt'),
    write_key: input.writeKey ?? null,
    completed_at: null,
    served_from: null,
    served_until: null,
    served_rev: 0,
    chunk_count: 0,
    tokens: 0,
    embedding_model: null,
    error: null,
    archived_at: null,
  };
}

export function toDocumentRecord(document: DocumentSource, latest: VersionSource): DocumentRecord {
  return {
    id: document.id,
    workspaceId: document.workspace_id,
    source: document.source,
    ...(typeof document.source_item === 'string' ? { sourceItem: document.source_item } : {}),
    createdAt: document.created_at,
    updatedAt: document.updated_at,
    deletedAt: document.deleted_at ?? null,
    latestVersion: document.latest_version,
    servedVersion: document.served_version ?? null,
    latest: toVersionRecord(latest),
  };
}

/** Float32 values as base64 (exact round trip, a quarter of the JSON size). */
export function encodeVector(vector: Float32Array): string {
  return vectorBytes(vector).toString('base64');
}

export function decodeVector(encoded: string): Float32Array {
  return bytesToVector(Buffer.from(encoded, 'base64'));
}
