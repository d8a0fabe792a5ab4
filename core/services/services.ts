/**
 * What the HTTP layer and the CLI may call. Services check workspace ownership (another
 * workspace's document is `not-found`), validate domain rules, audit, and return the views of
 * `core/model/response-views.model.ts`. Request-shape validation (types, ranges of query
 * parameters) is the caller's job; services still reject impossible combinations with `bad-request`.
 */
import type {
  ApiKeyRecord,
  AuditAction,
  Permission,
  Plan,
  Role,
  SessionRecord,
  UserRecord,
} from '../model/account-records.model.ts';
import type {
  ApiKeyView,
  AuditEntryView,
  PaginationView,
  SearchMode,
  SearchView,
} from '../model/response-views.model.ts';
import type { SearchFilters } from '../model/search-filters.model.ts';
import type { WebhooksService } from '../webhooks/webhooks.service.ts';
import type { ChunksService } from './chunks.service.ts';
import type { DeadLettersService } from './dead-letters.service.ts';
import type { DocumentWritesService } from './document-writes.service.ts';
import type { DocumentsService } from './documents.service.ts';
import type { EventStreamService } from './event-stream.service.ts';
import type { HealthService } from './health.service.ts';
import type { IdempotencyService } from './idempotency.service.ts';
import type { IngestionBacklogService } from './ingestion-backlog.service.ts';
import type { PipelineOverviewService } from './pipeline-overview.service.ts';
import type { ReindexService } from './reindex.service.ts';
import type { AccountActor, RequestContext } from './request-context.ts';
import type { RetentionService } from './retention.service.ts';
import type { ScopedTokensService } from './scoped-tokens.service.ts';
import type { FusionWeights, ResultGrouping } from './search-ranking.ts';
import type { SourcesService } from './sources.service.ts';
import type { UploadStagingService } from './upload-staging.service.ts';
import type { UsageService } from './usage.service.ts';
import type { VersionsService } from './versions.service.ts';

export type { HealthService } from './health.service.ts';
export type { AccountActor, RequestContext } from './request-context.ts';

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
      /** `asc` (default): oldest first; `desc`: newest first. */
      order?: 'asc' | 'desc';
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
  /** How many keys exist, revoked ones included. */
  count(): Promise<number>;
  /** Revokes a key (false: unknown id); with `by`, a `key_revoke` entry goes to the audit log. */
  revoke(id: string, by?: AccountActor): Promise<boolean>;
  /** The active key record for a presented key, or null (unknown, malformed or revoked). Cached for `KB_KEY_CACHE_MS`. */
  authenticate(presented: string): Promise<ApiKeyRecord | null>;
  /** The active key record with this id (a scoped token's parent), or null (unknown or revoked). Cached as `authenticate`. */
  activeKey(id: string): Promise<ApiKeyRecord | null>;
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
  /**
   * Counts `requests` requests of the key (default 1: an MCP batch counts each call) and decides:
   * allowed only when all of them fit in what the window has left; a refused hit counts nothing
   * (and its `remaining` says how many would still fit).
   */
  hit(key: ApiKeyRecord, nowMs?: number, requests?: number): RateDecision;
  close(): Promise<void>;
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
   * Creates an account with the given password (chosen by the person: at least 12 characters,
   * else `validation-error`) or, without one, a generated password marked `passwordGenerated`
   * (the dashboard has it changed at the first sign-in); the password is returned once. Rejects a
   * malformed email or workspace id with `validation-error`, an existing email with `conflict`.
   */
  create(input: { email: string; workspaceIds: readonly string[]; role: Role; password?: string }): Promise<{
    account: AccountView;
    password: string;
  }>;
  /**
   * Replaces an account's password with a generated one, returned once and marked
   * `passwordGenerated`, and signs out every session of the account; `not-found` for an unknown
   * email.
   */
  resetPassword(email: string): Promise<{ account: AccountView; password: string }>;
  list(): Promise<AccountView[]>;
  /** How many accounts exist. */
  count(): Promise<number>;
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
   * the field when it is wrong, or when the new one is shorter than 12 characters), clears the
   * `passwordGenerated` mark, and signs out every other session of the account.
   */
  changePassword(input: { userId: string; sessionId: string; current: string; next: string }): Promise<void>;
}

export interface Services {
  readonly uploads: UploadStagingService;
  readonly documents: DocumentsService;
  readonly documentWrites: DocumentWritesService;
  /** Sources of synchronisation and their runs. */
  readonly sources: SourcesService;
  readonly versions: VersionsService;
  readonly chunks: ChunksService;
  readonly search: SearchService;
  readonly audit: AuditService;
  readonly keys: KeysService;
  readonly accounts: AccountsService;
  readonly usage: UsageService;
  readonly pipeline: PipelineOverviewService;
  /** Dead letters of the stages: list and replay (operators). */
  readonly deadLetters: DeadLettersService;
  readonly rateLimiter: RateLimiter;
  readonly health: HealthService;
  readonly reindex: ReindexService;
  readonly retention: RetentionService;
  readonly webhooks: WebhooksService;
  readonly events: EventStreamService;
  /** Scoped tokens: minting and checking. */
  readonly tokens: ScopedTokensService;
  /** `Idempotency-Key`s of writes: claims and the answers retries get again. */
  readonly idempotency: IdempotencyService;
  /** The ingestion backlog: its counts and drain rate, and admission of writes that queue ingestion. */
  readonly backlog: IngestionBacklogService;
}
