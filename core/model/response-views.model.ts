/**
 * The JSON shapes the service shows to clients (snake_case, as in the interface contract).
 * Services return these; the HTTP layer and the CLI print them as they are.
 */
import type { IngestError, Metadata, VersionStatus } from './document-records.model.ts';

export interface DocumentStatsView {
  chunks: number;
  tokens: number;
}

/** A list item (the OpenAPI schema `DocumentListItem`, apps/api/schemas/documents.schema.ts). */
export interface DocumentListItemView {
  id: string;
  document_id: string;
  /** The file name of the latest version. */
  name: string;
  /** The detected type of the latest version. */
  mime_type: string;
  source: string;
  /** For a document a source synchronises: its path, object key or URL within the source; else null. Absent from write responses. */
  source_item?: string | null;
  status: VersionStatus;
  version: number;
  metadata: Metadata;
  stats: DocumentStatsView;
  created_at: string;
  updated_at: string;
}

/** GET /documents/:id, PUT/PATCH responses: list-item fields plus details. */
export interface DocumentView extends DocumentListItemView {
  workspace_id: string;
  size_bytes: number;
  content_hash: string;
  storage_url: string;
  served_version: number | null;
  error: IngestError | null;
  /** Only while the version is `processing`. */
  progress?: ProgressView;
}

export interface ProgressView {
  stage: 'parse' | 'chunk' | 'embed' | 'index';
  chunks_done: number;
  chunks_total: number;
}

/** POST /documents response (the OpenAPI schema `UploadResponse`, apps/api/schemas/documents.schema.ts). */
export interface UploadView {
  document_id: string;
  name: string;
  workspace_id: string;
  storage_url: string;
  mime_type: string;
  size_bytes: number;
  content_hash: string;
  status: 'pending';
  version: number;
  message: string;
}

export interface PaginationView {
  has_more: boolean;
  next_cursor: string | null;
  total: number;
}

export interface ChunkView {
  id: string;
  index: number;
  content: string;
  tokens: number;
  start_offset: number;
  end_offset: number;
  page: number | null;
  metadata: Metadata;
}

export interface ChunksView {
  document_id: string;
  version: number;
  chunks: ChunkView[];
  pagination: PaginationView;
}

export interface ContextView {
  document_id: string;
  version: number;
  content: string;
  tokens: number;
  chunk_count: number;
}

export interface ContextWindowView {
  document_id: string;
  version: number;
  chunk_id: string;
  window: number;
  chunks: ChunkView[];
}

export interface VersionView {
  version: number;
  created_at: string;
  created_by: string;
  size_bytes: number;
  chunk_count: number;
  status: VersionStatus;
  change_reason: string | null;
  restored_from: number | null;
  content_hash: string;
  name: string;
  mime_type: string;
  tokens: number;
  served_from: string | null;
  served_until: string | null;
  archived: boolean;
  error: IngestError | null;
}

export interface VersionDetailView extends VersionView {
  metadata: Metadata;
  storage_url: string;
}

export type DiffEntryView =
  | { type: 'added'; from_index: null; to_index: number; content: string }
  | { type: 'removed'; from_index: number; to_index: null; content: string }
  | { type: 'modified'; from_index: number; to_index: number; old_content: string; new_content: string };

export interface CompareView {
  document_id: string;
  from_version: number;
  to_version: number;
  changes: {
    added_chunks: number;
    removed_chunks: number;
    modified_chunks: number;
    unchanged_chunks: number;
    diff: DiffEntryView[];
  };
}

export interface RollbackView {
  document_id: string;
  version: number;
  restored_from: number;
  status: VersionStatus;
}

export interface SearchResultView {
  chunk_id: string;
  document_id: string;
  document_name: string;
  version: number;
  index: number;
  score: number;
  content: string;
  highlights: string[];
  metadata: Metadata;
  page: number | null;
}

export interface SearchView {
  query: string;
  mode: SearchMode;
  as_of: string | null;
  results: SearchResultView[];
  took_ms: number;
  warnings?: string[];
}

export type SearchMode = 'hybrid' | 'semantic' | 'keyword';

/** A document's name for a page listing document ids (deleted documents too). */
export interface DocumentNameView {
  document_id: string;
  /** The current name; a deleted document's latest version's; null when purged or unknown. */
  name: string | null;
  deleted: boolean;
}

export interface AuditEntryView {
  id: string;
  action: string;
  workspace_id: string;
  document_id: string;
  /** `name`: the source's name, for type `source` only. */
  actor: { type: 'api_key' | 'user' | 'source'; id: string; name?: string };
  timestamp: string;
  version: number | null;
  before: { version: number | null; metadata: Metadata | null } | null;
  after: { version: number | null; metadata: Metadata | null } | null;
  change_reason: string | null;
  trace_id: string;
}

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  workspace_id: string;
  permissions: string[];
  plan: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export type CheckStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface CheckView {
  status: CheckStatus;
  latency_ms: number | null;
  message: string;
}

export interface ReadinessView {
  status: CheckStatus;
  timestamp: string;
  version: string;
  service: string;
  checks: Record<string, CheckView>;
}

/** One key's row of GET /dashboard/api/usage. */
export interface KeyUsageView {
  key_id: string;
  name: string;
  prefix: string;
  revoked_at: string | null;
  /** Requests in each minute of {@link UsageView.minutes}, oldest first. */
  per_minute: number[];
  total: number;
}

/** GET /dashboard/api/usage: requests per minute per API key of the workspace over the last hour. */
export interface UsageView {
  /** Start of each minute (ISO 8601), oldest first: the last 60 minutes including the current one. */
  minutes: string[];
  keys: KeyUsageView[];
}
