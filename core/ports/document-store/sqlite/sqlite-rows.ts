import type {
  ChunkRecord,
  DocumentRecord,
  IngestError,
  Metadata,
  VersionRecord,
  VersionStatus,
} from '../../../model/document-records.model.ts';
import type { SearchHit } from '../document-store.port.ts';
import {
  type StoredChunkFields,
  type StoredProgress,
  type StoredVersionFields,
  toChunkRecord as storedChunkRecord,
  toVersionRecord as storedVersionRecord,
} from '../stored-records.ts';

/** A `versions` row as SQLite returns it: the stored version fields, `metadata` and `error` as JSON text. */
export interface VersionRow extends Omit<StoredVersionFields, 'status' | 'metadata' | 'error' | 'progress'> {
  readonly status: string;
  readonly metadata: string;
  readonly error: string | null;
  readonly progress: string | null;
}

/** A `documents` row (columns prefixed `d_`) joined with its latest version's row. */
export interface DocumentRow extends VersionRow {
  readonly d_id: string;
  readonly d_workspace_id: string;
  readonly d_source: string;
  readonly d_source_item: string | null;
  readonly d_created_at: string;
  readonly d_updated_at: string;
  readonly d_deleted_at: string | null;
  readonly d_latest_version: number;
  readonly d_served_version: number | null;
}

/** A `chunks` row without its vector: the stored chunk fields, `metadata` as JSON text. */
export interface ChunkRow extends Omit<StoredChunkFields, 'metadata'> {
  readonly metadata: string;
}

/** Select list producing a {@link DocumentRow} from `documents d JOIN versions v`. */
export const DOCUMENT_COLUMNS = `d.id AS d_id, d.workspace_id AS d_workspace_id, d.source AS d_source,
  d.source_item AS d_source_item, d.created_at AS d_created_at, d.updated_at AS d_updated_at, d.deleted_at AS d_deleted_at,
  d.latest_version AS d_latest_version, d.served_version AS d_served_version, v.*`;

/** Select list producing a {@link ChunkRow} from `chunks c`. */
export const CHUNK_COLUMNS = `c.id, c.document_id, c.version, c.workspace_id, c.idx, c.content, c.content_hash,
  c.tokens, c.start_offset, c.end_offset, c.page, c.metadata`;

/** A chunk row with its version's name, metadata and type: what every search path reads per hit. */
export interface HitRow extends ChunkRow {
  readonly v_name: string;
  readonly v_metadata: string;
  readonly v_mime_type: string;
}

/** Select list producing a {@link HitRow} from `chunks c JOIN versions v`. */
export const HIT_COLUMNS = `${CHUNK_COLUMNS}, v.name AS v_name, v.metadata AS v_metadata, v.mime_type AS v_mime_type`;

/** The port's {@link SearchHit} of a {@link HitRow} and its score. */
export function toSearchHit(row: HitRow, score: number): SearchHit {
  return {
    chunk: toChunkRecord(row),
    score,
    documentName: row.v_name,
    documentMetadata: parseMetadata(row.v_metadata),
    mimeType: row.v_mime_type,
  };
}

function parseMetadata(json: string): Metadata {
  const value: unknown = JSON.parse(json);
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Metadata) : {};
}

export function toVersionRecord(row: VersionRow): VersionRecord {
  return storedVersionRecord({
    ...row,
    status: row.status as VersionStatus,
    metadata: parseMetadata(row.metadata),
    error: row.error === null ? null : (JSON.parse(row.error) as IngestError),
    progress: row.progress === null ? null : (JSON.parse(row.progress) as StoredProgress),
  });
}

export function toDocumentRecord(row: DocumentRow): DocumentRecord {
  return {
    id: row.d_id,
    workspaceId: row.d_workspace_id,
    source: row.d_source,
    ...(row.d_source_item !== null ? { sourceItem: row.d_source_item } : {}),
    createdAt: row.d_created_at,
    updatedAt: row.d_updated_at,
    deletedAt: row.d_deleted_at,
    latestVersion: row.d_latest_version,
    servedVersion: row.d_served_version,
    latest: toVersionRecord(row),
  };
}

export function toChunkRecord(row: ChunkRow): ChunkRecord {
  return storedChunkRecord({ ...row, metadata: parseMetadata(row.metadata) });
}
