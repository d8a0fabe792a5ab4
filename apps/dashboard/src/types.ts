/** The API's views the dashboard reads (see core/model/response-views.model.ts). */

export type Status = 'pending' | 'processing' | 'completed' | 'failed';

export interface Account {
  id: string;
  email: string;
  role: 'owner' | 'member';
  workspaces: string[];
}

export interface SessionInfo {
  account: Account;
  workspace: string;
  csrf_token: string;
  expires_at: string;
}

export interface ApiKey {
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

export interface IngestError {
  code: string;
  message: string;
  stage: string;
  attempts: number;
  at: string;
}

export interface DocumentItem {
  document_id: string;
  status: Status;
  version: number;
  metadata: Record<string, unknown>;
  stats: { chunks: number; tokens: number };
  created_at: string;
  updated_at: string;
}

export interface DocumentDetail extends DocumentItem {
  name: string;
  mime_type: string;
  size_bytes: number;
  content_hash: string;
  source: string;
  served_version: number | null;
  error: IngestError | null;
}

export interface Version {
  version: number;
  created_at: string;
  created_by: string;
  size_bytes: number;
  chunk_count: number;
  status: Status;
  change_reason: string | null;
  restored_from: number | null;
  name: string;
  tokens: number;
  error: IngestError | null;
}

export type DiffEntry =
  | { type: 'added'; from_index: null; to_index: number; content: string }
  | { type: 'removed'; from_index: number; to_index: null; content: string }
  | { type: 'modified'; from_index: number; to_index: number; old_content: string; new_content: string };

export interface Compare {
  from_version: number;
  to_version: number;
  changes: {
    added_chunks: number;
    removed_chunks: number;
    modified_chunks: number;
    unchanged_chunks: number;
    diff: DiffEntry[];
  };
}

export interface Chunk {
  id: string;
  index: number;
  content: string;
  tokens: number;
  page: number | null;
}

export interface SearchResult {
  chunk_id: string;
  document_id: string;
  document_name: string;
  version: number;
  index: number;
  score: number;
  content: string;
  highlights: string[];
  page: number | null;
}

export interface AuditEntry {
  id: string;
  action: string;
  document_id: string;
  actor: { type: 'api_key' | 'user'; id: string };
  timestamp: string;
  version: number | null;
  before: { version: number | null; metadata: Record<string, unknown> | null } | null;
  after: { version: number | null; metadata: Record<string, unknown> | null } | null;
  change_reason: string | null;
}

export interface Pagination {
  has_more: boolean;
  next_cursor: string | null;
  total: number;
}
