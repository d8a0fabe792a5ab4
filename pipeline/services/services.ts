/**
 * What the HTTP layer and the CLI may call. Services check workspace ownership (another
 * workspace's document is `not-found`), validate domain rules, audit, and return the views of
 * `views.ts`. Request-shape validation (types, ranges of query parameters) is the caller's job;
 * services still reject impossible combinations with `bad-request`.
 */
import type { Readable } from 'node:stream';
import type { ApiKeyRecord, AuditAction, Permission, Plan } from '../ports/control-store/control-store.port.ts';
import type { Metadata, SearchFilters, VersionStatus } from '../ports/document-store/document-store.port.ts';
import type { FusionWeights, ResultGrouping } from './search-ranking.ts';
import type {
  ApiKeyView,
  AuditEntryView,
  ChunksView,
  CompareView,
  ContextView,
  ContextWindowView,
  DocumentListItemView,
  DocumentView,
  PaginationView,
  ReadinessView,
  RollbackView,
  SearchMode,
  SearchView,
  UploadView,
  VersionDetailView,
  VersionView,
} from './views.ts';

/** Who is asking: the authenticated key's workspace and id, and the request's trace id. */
export interface RequestContext {
  readonly workspaceId: string;
  readonly keyId: string;
  readonly traceId: string;
}

/** A file streamed to object storage and checked, not yet attached to a document version. */
export interface StagedUpload {
  readonly documentId: string;
  readonly storageKey: string;
  readonly sizeBytes: number;
  readonly contentHash: string;
  readonly mimeType: string;
  readonly name: string;
}

export interface ListDocumentsQuery {
  readonly status?: VersionStatus;
  readonly source?: string;
  readonly createdAfter?: string;
  readonly createdBefore?: string;
  /** Cursor mode (default). */
  readonly cursor?: string;
  readonly limit?: number;
  /** Offset mode, chosen when `page` or `pageSize` is present. */
  readonly page?: number;
  readonly pageSize?: number;
}

export type ListDocumentsResult =
  | { readonly mode: 'cursor'; readonly documents: DocumentListItemView[]; readonly pagination: PaginationView }
  | {
      readonly mode: 'offset';
      readonly documents: DocumentListItemView[];
      readonly total: number;
      readonly page: number;
      readonly page_size: number;
    };

export interface DocumentsService {
  /**
   * Streams the file to object storage while counting, hashing (SHA-256) and sniffing its type.
   * Rejects with `payload-too-large` (detail: the actual byte count and the limit; the rest of
   * the stream is drained to count it), `empty-file`, or `unsupported-type` (detail: the type and
   * the allowed ones). A rejection leaves nothing stored. `documentId` is given for updates.
   */
  stageUpload(input: {
    workspaceId: string;
    documentId?: string;
    stream: Readable;
    filename: string;
    declaredType?: string;
  }): Promise<StagedUpload>;
  /** Removes a staged file that will not be used (a later validation failed). */
  discardUpload(staged: StagedUpload): Promise<void>;
  create(
    ctx: RequestContext,
    input: { staged: StagedUpload; metadata: Metadata; source: string; changeReason: string | null },
  ): Promise<UploadView>;
  /** PUT: new content → version M+1, re-ingested. `metadata` undefined keeps the current metadata. */
  replaceContent(
    ctx: RequestContext,
    documentId: string,
    input: { staged: StagedUpload; metadata?: Metadata; changeReason: string | null },
  ): Promise<DocumentView>;
  /** PATCH: same content, new metadata → version M+1 without re-embedding. */
  patchMetadata(
    ctx: RequestContext,
    documentId: string,
    input: { metadata: Metadata; changeReason: string | null },
  ): Promise<DocumentView>;
  get(ctx: RequestContext, documentId: string): Promise<DocumentView>;
  list(ctx: RequestContext, query: ListDocumentsQuery): Promise<ListDocumentsResult>;
  remove(ctx: RequestContext, documentId: string, options: { purge: boolean }): Promise<void>;
  reprocess(ctx: RequestContext, documentId: string): Promise<DocumentView>;
  chunks(
    ctx: RequestContext,
    documentId: string,
    query: { version?: number; cursor?: string; limit: number },
  ): Promise<ChunksView>;
  context(
    ctx: RequestContext,
    documentId: string,
    query: { version?: number; chunkId?: string; window: number },
  ): Promise<ContextView | ContextWindowView>;
  versions(ctx: RequestContext, documentId: string): Promise<{ document_id: string; versions: VersionView[] }>;
  version(ctx: RequestContext, documentId: string, version: number): Promise<VersionDetailView>;
  compare(ctx: RequestContext, documentId: string, from: number, to: number): Promise<CompareView>;
  rollback(ctx: RequestContext, documentId: string, targetVersion: number): Promise<RollbackView>;
}

export interface SearchRequest {
  readonly query: string;
  readonly asOf?: string | null;
  readonly limit: number;
  readonly mode: SearchMode;
  readonly filters: SearchFilters;
  readonly minScore?: number;
  /** Hybrid weights; the configured default when absent. */
  readonly weights?: FusionWeights;
  /** How chunks of one document share the results (default `passage`). */
  readonly groupBy?: ResultGrouping;
}

export interface SearchService {
  search(ctx: RequestContext, request: SearchRequest): Promise<SearchView>;
}

export interface AuditService {
  list(
    ctx: RequestContext,
    query: {
      documentId?: string;
      action?: AuditAction;
      since?: string;
      until?: string;
      cursor?: string;
      limit: number;
    },
  ): Promise<{ entries: AuditEntryView[]; pagination: PaginationView }>;
}

export interface KeysService {
  create(input: {
    workspaceId: string;
    name: string;
    permissions: readonly Permission[];
    plan: Plan;
  }): Promise<{ key: string; record: ApiKeyView }>;
  list(workspaceId?: string): Promise<ApiKeyView[]>;
  revoke(id: string): Promise<boolean>;
  /** The active key record for a presented key, or null (unknown, malformed or revoked). Cached for `KB_KEY_CACHE_MS`. */
  authenticate(presented: string): Promise<ApiKeyRecord | null>;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Unix seconds when the oldest counted request leaves the window. */
  readonly reset: number;
  /** Seconds to wait before retrying (≥ 1 when not allowed, else 0). */
  readonly retryAfter: number;
}

export interface RateLimiter {
  /** Counts one request of the key and decides. */
  hit(key: ApiKeyRecord, nowMs?: number): RateDecision;
  close(): Promise<void>;
}

export interface HealthService {
  ready(): Promise<ReadinessView>;
}

export interface Services {
  readonly documents: DocumentsService;
  readonly search: SearchService;
  readonly audit: AuditService;
  readonly keys: KeysService;
  readonly rateLimiter: RateLimiter;
  readonly health: HealthService;
}
