/**
 * What the HTTP layer and the CLI may call. Services check workspace ownership (another
 * workspace's document is `not-found`), validate domain rules, audit, and return the views of
 * `views.ts`. Request-shape validation (types, ranges of query parameters) is the caller's job;
 * services still reject impossible combinations with `bad-request`.
 */
import type { Readable } from 'node:stream';
import type {
  ApiKeyRecord,
  AuditAction,
  Permission,
  Plan,
  Role,
  SessionRecord,
  UserRecord,
} from '../ports/control-store/control-store.port.ts';
import type { Metadata, SearchFilters, VersionStatus } from '../ports/document-store/document-store.port.ts';
import type { PipelineOverviewService } from './pipeline-overview.service.ts';
import type { FusionWeights, ResultGrouping } from './search-ranking.ts';
import type { UsageService } from './usage.service.ts';
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

/**
 * Who is asking: the workspace, the authenticated key's id (or, for a person signed in to the
 * dashboard, the account's id with `actorType: 'user'`), and the request's trace id.
 */
export interface RequestContext {
  readonly workspaceId: string;
  readonly keyId: string;
  /** Absent: an API key. */
  readonly actorType?: 'api_key' | 'user';
  readonly traceId: string;
}

/** A person acting in the dashboard, for the audit log. */
export interface AccountActor {
  readonly accountId: string;
  readonly workspaceId: string;
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
  /**
   * A token that changes whenever a write may have changed what `list` answers for any workspace
   * (the document store's change mark): an answer of `list` read after the token stays right
   * while the token is the same, so a caller may cache it (and its serialised form) under it.
   */
  listChangeMark(): string;
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
  /** Creates a key; with `by`, a `key_create` entry goes to the audit log of the key's workspace. */
  create(
    input: {
      workspaceId: string;
      name: string;
      permissions: readonly Permission[];
      plan: Plan;
    },
    by?: AccountActor,
  ): Promise<{ key: string; record: ApiKeyView }>;
  list(workspaceId?: string): Promise<ApiKeyView[]>;
  /** Revokes a key (false: unknown id); with `by`, a `key_revoke` entry goes to the audit log. */
  revoke(id: string, by?: AccountActor): Promise<boolean>;
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

/** A dashboard account as the dashboard shows it (never the password hash). */
export interface AccountView {
  id: string;
  email: string;
  role: Role;
  workspaces: string[];
  created_at: string;
}

/** A signed-in session: the token goes into the cookie, the rest to the browser. */
export interface SignedIn {
  readonly token: string;
  readonly session: SessionRecord;
  readonly user: UserRecord;
}

export interface AccountsService {
  /**
   * Creates an account with a generated password, returned once. Rejects a malformed email or
   * workspace id with `validation-error`, an existing email with `conflict`.
   */
  create(input: { email: string; workspaceIds: readonly string[]; role: Role }): Promise<{
    account: AccountView;
    password: string;
  }>;
  list(): Promise<AccountView[]>;
  /**
   * Checks the password and opens a session. A wrong email or password is `unauthorized` (the
   * same answer for both); after `maxFailedSignIns` wrong passwords in a row the account is
   * locked for `lockoutSeconds` (`rate-limit-exceeded` with `retryAfter`), even for the right
   * password. Failure counts live in this process.
   */
  signIn(email: string, password: string): Promise<SignedIn>;
  /** The live session and its account for a token, or null (unknown, expired or signed out). */
  authenticate(token: string): Promise<{ session: SessionRecord; user: UserRecord } | null>;
  signOut(token: string): Promise<void>;
  /**
   * Replaces the account's password after checking the current one (`validation-error` naming
   * the field when it is wrong, or when the new one is shorter than 12 characters), and signs out
   * every other session of the account.
   */
  changePassword(input: { userId: string; sessionId: string; current: string; next: string }): Promise<void>;
}

export interface Services {
  readonly documents: DocumentsService;
  readonly search: SearchService;
  readonly audit: AuditService;
  readonly keys: KeysService;
  readonly accounts: AccountsService;
  readonly usage: UsageService;
  readonly pipeline: PipelineOverviewService;
  readonly rateLimiter: RateLimiter;
  readonly health: HealthService;
}
