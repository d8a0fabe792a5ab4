export const PERMISSIONS = ['read', 'search', 'write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const PLANS = ['starter', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  /** First 12 characters of the key, for display. */
  readonly prefix: string;
  /** SHA-256 of the full key, lowercase hex. The key itself is never stored. */
  readonly hash: string;
  readonly workspaceId: string;
  readonly permissions: readonly Permission[];
  readonly plan: Plan;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  readonly lastUsedAt: string | null;
}

/** Document actions, and the key actions a person takes in the dashboard. */
export type AuditAction = 'create' | 'update' | 'rollback' | 'delete' | 'purge' | 'key_create' | 'key_revoke';

export const ROLES = ['owner', 'member'] as const;
/** `owner` also manages the workspace's API keys; `member` works with documents, search and audit. */
export type Role = (typeof ROLES)[number];

/** A person who signs in to the dashboard. */
export interface UserRecord {
  readonly id: string;
  /** Lowercase; unique across the store. */
  readonly email: string;
  /** `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`; the password itself is never stored. */
  readonly passwordHash: string;
  readonly role: Role;
  /** Workspaces the account may see, at least one. */
  readonly workspaceIds: readonly string[];
  readonly createdAt: string;
}

/** A signed-in dashboard session. */
export interface SessionRecord {
  /** SHA-256 of the session token (lowercase hex). The token itself is never stored. */
  readonly id: string;
  readonly userId: string;
  /** Token the browser must echo in `X-CSRF-Token` on every state change. */
  readonly csrfToken: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
}

export interface AuditSnapshot {
  readonly version: number | null;
  readonly metadata: Record<string, unknown> | null;
}

export interface AuditEntry {
  /** UUID v7, so ids sort by time. */
  readonly id: string;
  readonly action: AuditAction;
  readonly workspaceId: string;
  readonly documentId: string;
  /** A key (API calls) or a dashboard account (`user`, the account id). */
  readonly actor: { readonly type: 'api_key' | 'user'; readonly id: string };
  readonly timestamp: string;
  readonly version: number | null;
  readonly before: AuditSnapshot | null;
  readonly after: AuditSnapshot | null;
  readonly changeReason: string | null;
  readonly traceId: string;
}

export interface AuditQuery {
  readonly workspaceId: string;
  readonly documentId?: string;
  readonly action?: AuditAction;
  readonly since?: string;
  readonly until?: string;
  /** Return entries with `id` greater than this (ascending order by id = by time). */
  readonly afterId?: string;
  readonly limit: number;
}

/** Requests one API process counted for one key in one second. */
export interface UsageCount {
  readonly keyId: string;
  /** Unix second the requests fell in. */
  readonly second: number;
  readonly count: number;
}

/**
 * The control plane: API keys, dashboard accounts and sessions, the audit log, rate-limit
 * counters and usage.
 *
 * Contract:
 * - `createKey` with an existing id or hash rejects with `conflict`. `findKeyByHash` returns
 *   revoked keys too (the caller decides); `revokeKey` is idempotent and keeps the first
 *   `revokedAt`; it returns false for an unknown id.
 * - `touchKeys` records last use; it may be applied late or coalesced, never moves a time back.
 * - `appendAudit` is idempotent by entry id. `listAudit` returns entries in ascending id order
 *   (ids are UUID v7, so that is time order) and the total matching the filters without paging.
 * - `recordUsage` adds counts under an instance id; re-sending the same (instance, key, second)
 *   replaces rather than adds, so a retried sync does not double count. `readUsage` sums over all
 *   instances except `excludeInstance` for seconds ≥ `sinceSecond`.
 * - `createUser` with an existing id or email (emails compare lowercase) rejects with `conflict`;
 *   `findUserByEmail` ignores case.
 * - `setPassword` replaces the hash at once (the latest `at` wins when two changes race).
 * - `createSession` with an existing id rejects with `conflict`. `getSession` returns revoked and
 *   expired sessions too (the caller decides); `revokeSession` is idempotent, keeps the first
 *   `revokedAt`, and returns false for an unknown id. A revocation is visible to the next read.
 * - Outside the contract: key rotation, usage older than one day (may be compacted), changing or
 *   deleting accounts (other than their password), sessions past their expiry (may be removed), sign-in failure counts (kept
 *   by each API process).
 */
export interface ControlStore {
  readonly kind: string;
  createKey(key: ApiKeyRecord): Promise<void>;
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** The keys of the given hashes, by hash, read together (unknown hashes are absent; revoked keys are there). */
  findKeysByHash(hashes: readonly string[]): Promise<Map<string, ApiKeyRecord>>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  listKeys(workspaceId?: string): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, at: string): Promise<boolean>;
  countKeys(): Promise<number>;
  touchKeys(lastUsed: ReadonlyMap<string, string>): Promise<void>;

  createUser(user: UserRecord): Promise<void>;
  getUser(id: string): Promise<UserRecord | null>;
  findUserByEmail(email: string): Promise<UserRecord | null>;
  listUsers(): Promise<UserRecord[]>;
  countUsers(): Promise<number>;

  /** Replaces an account's password hash; false for an unknown id. The next read sees the new hash. */
  setPassword(userId: string, passwordHash: string, at: string): Promise<boolean>;

  createSession(session: SessionRecord): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  revokeSession(id: string, at: string): Promise<boolean>;
  /** Revokes every live session of an account except `exceptId`; returns how many it revoked. */
  revokeUserSessions(userId: string, at: string, exceptId?: string): Promise<number>;

  appendAudit(entry: AuditEntry): Promise<void>;
  listAudit(query: AuditQuery): Promise<{ entries: AuditEntry[]; total: number }>;

  recordUsage(instanceId: string, counts: readonly UsageCount[]): Promise<void>;
  readUsage(keyIds: readonly string[], sinceSecond: number, excludeInstance?: string): Promise<UsageCount[]>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
