import { KbError } from '../../errors/kb-error.ts';
import type {
  ApiKeyRecord,
  AuditAction,
  AuditEntry,
  AuditSnapshot,
  Permission,
  Plan,
  Role,
  SessionRecord,
  UserRecord,
} from '../../model/account-records.model.ts';

/** The stored columns of an API key both adapters keep, with `permissions` as a list. */
export interface StoredKeyFields {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly hash: string;
  readonly workspace_id: string;
  readonly permissions: readonly string[];
  readonly plan: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** An audit row as both adapters read it: snapshots as JSON text. */
export interface AuditRow {
  readonly id: string;
  readonly actor_type: string;
  readonly workspace_id: string;
  readonly document_id: string;
  readonly action: string;
  readonly actor_id: string;
  readonly timestamp: string;
  readonly version: number | null;
  readonly before_json: string | null;
  readonly after_json: string | null;
  readonly change_reason: string | null;
  readonly trace_id: string;
}

/** An audit entry as both adapters write it. */
export type AuditInsertRow = AuditRow;

/** Epoch milliseconds of an ISO 8601 timestamp; throws `bad-request` naming `field` for an unparseable one. */
export function instant(value: string, field: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new KbError('bad-request', `${field} is not an ISO 8601 timestamp: ${value}`);
  return ms;
}

export function toKeyRecord(row: StoredKeyFields, lastUsedAt: string | null): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    workspaceId: row.workspace_id,
    permissions: row.permissions as Permission[],
    plan: row.plan as Plan,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt,
  };
}

/** The port's {@link AuditEntry} of a stored row (a version read back as text becomes a number). */
export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    action: row.action as AuditAction,
    workspaceId: row.workspace_id,
    documentId: row.document_id,
    actor: { type: row.actor_type === 'user' ? 'user' : 'api_key', id: row.actor_id },
    timestamp: row.timestamp,
    version: row.version === null ? null : Number(row.version),
    before: row.before_json === null ? null : (JSON.parse(row.before_json) as AuditSnapshot),
    after: row.after_json === null ? null : (JSON.parse(row.after_json) as AuditSnapshot),
    changeReason: row.change_reason,
    traceId: row.trace_id,
  };
}

/** The stored columns of an audit entry, snapshots as JSON text. */
export function toAuditInsertRow(entry: AuditEntry): AuditInsertRow {
  return {
    id: entry.id,
    workspace_id: entry.workspaceId,
    document_id: entry.documentId,
    action: entry.action,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    timestamp: entry.timestamp,
    version: entry.version,
    before_json: entry.before === null ? null : JSON.stringify(entry.before),
    after_json: entry.after === null ? null : JSON.stringify(entry.after),
    change_reason: entry.changeReason,
    trace_id: entry.traceId,
  };
}

/** The stored columns of a dashboard account both adapters keep, with `workspace_ids` as a list. */
export interface StoredUserFields {
  readonly id: string;
  readonly email: string;
  readonly password_hash: string;
  readonly role: string;
  readonly workspace_ids: readonly string[];
  readonly created_at: string;
}

export function toUserRecord(row: StoredUserFields): UserRecord {
  return {
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    role: row.role as Role,
    workspaceIds: [...row.workspace_ids],
    createdAt: row.created_at,
  };
}

/** The stored columns of a session both adapters keep. */
export interface StoredSessionFields {
  readonly id: string;
  readonly user_id: string;
  readonly csrf_token: string;
  readonly created_at: string;
  readonly expires_at: string;
  readonly revoked_at: string | null;
}

export function toSessionRecord(row: StoredSessionFields): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}
