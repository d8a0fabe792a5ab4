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

/** Requests one API process counted for one key in one second. */
export interface UsageCount {
  readonly keyId: string;
  /** Unix second the requests fell in. */
  readonly second: number;
  readonly count: number;
}
