import type {
  ApiKeyRecord,
  AuditAction,
  AuditEntry,
  SessionRecord,
  UsageCount,
  UserRecord,
} from '../../model/account-records.model.ts';

export interface AuditQuery {
  readonly workspaceId: string;
  readonly documentId?: string;
  readonly action?: AuditAction;
  readonly since?: string;
  readonly until?: string;
  /** Return entries with `id` greater than this (ascending order by id = by time). */
  readonly afterId?: string;
  /** Return entries with `id` less than this (for paging newest first). */
  readonly beforeId?: string;
  /** `asc` (default): oldest first; `desc`: newest first. */
  readonly order?: 'asc' | 'desc';
  readonly limit: number;
}

/**
 * Who uses the service and what they did: API keys, dashboard accounts and sessions, the audit
 * log, rate-limit counters and usage.
 *
 * Contract:
 * - `createKey` with an existing id or hash rejects with `conflict`. `findKeyByHash` returns
 *   revoked keys too (the caller decides); `revokeKey` is idempotent and keeps the first
 *   `revokedAt`; it returns false for an unknown id.
 * - `touchKeys` records last use; it may be applied late or coalesced, never moves a time back.
 * - `appendAudit` is idempotent by entry id. `listAudit` returns entries in ascending id order
 *   (ids are UUID v7, so that is time order), or descending with `order: 'desc'`, and the total
 *   matching the filters without paging (`afterId`/`beforeId`).
 *   `listAudit` sees every entry appended to the same store before it; an adapter may buffer
 *   entries (ClickHouse inserts them in batches), so another process may see an entry up to its
 *   flush interval later, and `close` writes what is buffered (a killed process loses it).
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
export interface AccountStore {
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
