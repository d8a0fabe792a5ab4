import { KbError } from '../../errors/kb-error.ts';
import type { ApiKeyRecord, Permission, UsageCount } from '../../model/account-records.model.ts';
import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import {
  type AuditRow,
  instant,
  type StoredKeyFields,
  type StoredSessionFields,
  type StoredUserFields,
  toAuditEntry,
  toAuditInsertRow,
  toKeyRecord,
  toSessionRecord,
  toUserRecord,
} from './account-rows.ts';
import type { AccountStore, AuditQuery } from './account-store.port.ts';

export interface SqliteAccountStoreOptions {
  /** SQLite database file; its directory is created if missing. `:memory:` for a private in-memory store. */
  readonly file: string;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS cs_api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    permissions TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    last_used_at TEXT
  )`,
  'CREATE INDEX IF NOT EXISTS cs_api_keys_workspace ON cs_api_keys (workspace_id, created_at, id)',
  `CREATE TABLE IF NOT EXISTS cs_audit (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    action TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    version INTEGER,
    before_json TEXT,
    after_json TEXT,
    change_reason TEXT,
    trace_id TEXT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS cs_audit_workspace ON cs_audit (workspace_id, id)',
  'CREATE INDEX IF NOT EXISTS cs_audit_document ON cs_audit (workspace_id, document_id, id)',
  `CREATE TABLE IF NOT EXISTS cs_usage (
    instance_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    second INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (instance_id, key_id, second)
  )`,
  'CREATE INDEX IF NOT EXISTS cs_usage_key ON cs_usage (key_id, second)',
];

const ACCOUNT_MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS cs_users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    workspace_ids TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS cs_sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_ms INTEGER NOT NULL,
    revoked_at TEXT
  )`,
  'CREATE INDEX IF NOT EXISTS cs_sessions_expiry ON cs_sessions (expires_ms)',
];

/** A `cs_users` row: the stored account columns, `workspace_ids` as JSON text. */
interface UserRow extends Omit<StoredUserFields, 'workspace_ids'> {
  readonly workspace_ids: string;
}

const toUser = (row: UserRow) => toUserRecord({ ...row, workspace_ids: JSON.parse(row.workspace_ids) as string[] });

/** Sessions expired for longer than this are removed when a new session is created. */
const EXPIRED_SESSION_GRACE_MS = 24 * 60 * 60 * 1000;

/** A `cs_api_keys` row: the stored key columns, `permissions` as JSON text, and the last use. */
interface KeyRow extends Omit<StoredKeyFields, 'permissions'> {
  readonly permissions: string;
  readonly last_used_at: string | null;
}

function toKey(row: KeyRow): ApiKeyRecord {
  return toKeyRecord({ ...row, permissions: JSON.parse(row.permissions) as Permission[] }, row.last_used_at);
}

function isConstraintError(error: unknown): boolean {
  const code = error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

/**
 * The account store in SQLite: API keys, dashboard accounts and sessions, the audit log and
 * per-second usage counts. Emails are stored lowercase (the unique index makes them unique);
 * sessions expired for more than a day are deleted when a session is created.
 *
 * Storage choices: permissions and audit snapshots are JSON text; timestamps are kept as the ISO
 * strings given (audit entries also store epoch milliseconds, which the `since`/`until` filters
 * compare, both inclusive). `touchKeys` compares instants, not strings, so it never moves a
 * `lastUsedAt` back. `readUsage` returns one summed count per (key, second), ordered by key then
 * second. `listKeys` orders by creation time then id.
 */
export function createSqliteAccountStore(options: SqliteAccountStoreOptions): AccountStore {
  const db: Database = openDatabase(options.file);
  migrate(db, 'account-store-001', MIGRATIONS);
  migrate(db, 'account-store-002-accounts', ACCOUNT_MIGRATIONS);

  const insertKey = db.prepare(
    `INSERT INTO cs_api_keys (id, name, prefix, hash, workspace_id, permissions, plan, created_at, revoked_at, last_used_at)
     VALUES (@id, @name, @prefix, @hash, @workspaceId, @permissions, @plan, @createdAt, @revokedAt, @lastUsedAt)`,
  );
  const keyByHash = db.prepare<[string], KeyRow>('SELECT * FROM cs_api_keys WHERE hash = ?');
  const keyById = db.prepare<[string], KeyRow>('SELECT * FROM cs_api_keys WHERE id = ?');
  const allKeys = db.prepare<[], KeyRow>('SELECT * FROM cs_api_keys ORDER BY created_at, id');
  const workspaceKeys = db.prepare<[string], KeyRow>(
    'SELECT * FROM cs_api_keys WHERE workspace_id = ? ORDER BY created_at, id',
  );
  const revoke = db.prepare<[string, string]>(
    'UPDATE cs_api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?',
  );
  const countAll = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM cs_api_keys');
  const lastUsedOf = db.prepare<[string], { last_used_at: string | null }>(
    'SELECT last_used_at FROM cs_api_keys WHERE id = ?',
  );
  const setLastUsed = db.prepare<[string, string]>('UPDATE cs_api_keys SET last_used_at = ? WHERE id = ?');
  const insertAudit = db.prepare(
    `INSERT OR IGNORE INTO cs_audit
       (id, workspace_id, document_id, action, actor_type, actor_id, timestamp, timestamp_ms, version,
        before_json, after_json, change_reason, trace_id)
     VALUES (@id, @workspace_id, @document_id, @action, @actor_type, @actor_id, @timestamp, @timestamp_ms, @version,
        @before_json, @after_json, @change_reason, @trace_id)`,
  );
  const upsertUsage = db.prepare<[string, string, number, number]>(
    `INSERT INTO cs_usage (instance_id, key_id, second, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (instance_id, key_id, second) DO UPDATE SET count = excluded.count`,
  );

  const insertUser = db.prepare(
    `INSERT INTO cs_users (id, email, password_hash, role, workspace_ids, created_at)
     VALUES (@id, @email, @password_hash, @role, @workspace_ids, @created_at)`,
  );
  const userById = db.prepare<[string], UserRow>('SELECT * FROM cs_users WHERE id = ?');
  const userByEmail = db.prepare<[string], UserRow>('SELECT * FROM cs_users WHERE email = ?');
  const allUsers = db.prepare<[], UserRow>('SELECT * FROM cs_users ORDER BY created_at, id');
  const countUsers = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM cs_users');
  const insertSession = db.prepare(
    `INSERT INTO cs_sessions (id, user_id, csrf_token, created_at, expires_at, expires_ms, revoked_at)
     VALUES (@id, @user_id, @csrf_token, @created_at, @expires_at, @expires_ms, @revoked_at)`,
  );
  const dropExpiredSessions = db.prepare<[number]>('DELETE FROM cs_sessions WHERE expires_ms < ?');
  const sessionById = db.prepare<[string], StoredSessionFields>(
    'SELECT id, user_id, csrf_token, created_at, expires_at, revoked_at FROM cs_sessions WHERE id = ?',
  );
  const revokeSession = db.prepare<[string, string]>(
    'UPDATE cs_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?',
  );
  const revokeUserSessions = db.prepare<[string, string, string]>(
    'UPDATE cs_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND id <> ?',
  );
  const setPassword = db.prepare<[string, string]>('UPDATE cs_users SET password_hash = ? WHERE id = ?');

  const touch = db.transaction((lastUsed: ReadonlyMap<string, string>) => {
    for (const [id, at] of lastUsed) {
      const atMs = instant(at, 'lastUsedAt');
      const row = lastUsedOf.get(id);
      if (!row) continue;
      if (row.last_used_at !== null && Date.parse(row.last_used_at) >= atMs) continue;
      setLastUsed.run(at, id);
    }
  });

  const record = db.transaction((instanceId: string, counts: readonly UsageCount[]) => {
    for (const c of counts) upsertUsage.run(instanceId, c.keyId, c.second, c.count);
  });

  return {
    kind: 'sqlite',

    async createKey(key) {
      try {
        insertKey.run({
          id: key.id,
          name: key.name,
          prefix: key.prefix,
          hash: key.hash,
          workspaceId: key.workspaceId,
          permissions: JSON.stringify(key.permissions),
          plan: key.plan,
          createdAt: key.createdAt,
          revokedAt: key.revokedAt,
          lastUsedAt: key.lastUsedAt,
        });
      } catch (error) {
        if (isConstraintError(error)) {
          throw new KbError('conflict', 'An API key with this id or hash already exists', {
            cause: error,
            retriable: false,
          });
        }
        throw error;
      }
    },

    async findKeyByHash(hash) {
      const row = keyByHash.get(hash);
      return row ? toKey(row) : null;
    },

    async findKeysByHash(hashes) {
      const found = new Map<string, ApiKeyRecord>();
      for (const hash of new Set(hashes)) {
        const row = keyByHash.get(hash);
        if (row) found.set(hash, toKey(row));
      }
      return found;
    },

    async getKey(id) {
      const row = keyById.get(id);
      return row ? toKey(row) : null;
    },

    async listKeys(workspaceId) {
      const rows = workspaceId === undefined ? allKeys.all() : workspaceKeys.all(workspaceId);
      return rows.map(toKey);
    },

    async revokeKey(id, at) {
      return revoke.run(at, id).changes > 0;
    },

    async countKeys() {
      return countAll.get()?.n ?? 0;
    },

    async touchKeys(lastUsed) {
      if (lastUsed.size > 0) touch.immediate(lastUsed);
    },

    async createUser(user) {
      try {
        insertUser.run({
          id: user.id,
          email: user.email.toLowerCase(),
          password_hash: user.passwordHash,
          role: user.role,
          workspace_ids: JSON.stringify(user.workspaceIds),
          created_at: user.createdAt,
        });
      } catch (error) {
        if (isConstraintError(error)) {
          throw new KbError('conflict', `An account with this id or email (${user.email}) already exists`, {
            cause: error,
            retriable: false,
          });
        }
        throw error;
      }
    },

    async getUser(id) {
      const row = userById.get(id);
      return row ? toUser(row) : null;
    },

    async findUserByEmail(email) {
      const row = userByEmail.get(email.toLowerCase());
      return row ? toUser(row) : null;
    },

    async listUsers() {
      return allUsers.all().map(toUser);
    },

    async countUsers() {
      return countUsers.get()?.n ?? 0;
    },

    async createSession(session) {
      const expiresMs = instant(session.expiresAt, 'expiresAt');
      dropExpiredSessions.run(Date.now() - EXPIRED_SESSION_GRACE_MS);
      try {
        insertSession.run({
          id: session.id,
          user_id: session.userId,
          csrf_token: session.csrfToken,
          created_at: session.createdAt,
          expires_at: session.expiresAt,
          expires_ms: expiresMs,
          revoked_at: session.revokedAt,
        });
      } catch (error) {
        if (isConstraintError(error)) {
          throw new KbError('conflict', 'A session with this id already exists', { cause: error, retriable: false });
        }
        throw error;
      }
    },

    async getSession(id) {
      const row = sessionById.get(id);
      return row ? toSessionRecord(row) : null;
    },

    async revokeSession(id, at) {
      instant(at, 'revokedAt');
      return revokeSession.run(at, id).changes > 0;
    },

    async setPassword(userId, passwordHash, at) {
      instant(at, 'at');
      return setPassword.run(passwordHash, userId).changes > 0;
    },

    async revokeUserSessions(userId, at, exceptId) {
      instant(at, 'revokedAt');
      return revokeUserSessions.run(at, userId, exceptId ?? '').changes;
    },

    async appendAudit(entry) {
      const timestampMs = instant(entry.timestamp, 'timestamp');
      insertAudit.run({ ...toAuditInsertRow(entry), timestamp_ms: timestampMs });
    },

    async listAudit(query: AuditQuery) {
      const where: string[] = ['workspace_id = @workspaceId'];
      const params: Record<string, string | number> = { workspaceId: query.workspaceId };
      if (query.documentId !== undefined) {
        where.push('document_id = @documentId');
        params.documentId = query.documentId;
      }
      if (query.action !== undefined) {
        where.push('action = @action');
        params.action = query.action;
      }
      if (query.since !== undefined) {
        where.push('timestamp_ms >= @since');
        params.since = instant(query.since, 'since');
      }
      if (query.until !== undefined) {
        where.push('timestamp_ms <= @until');
        params.until = instant(query.until, 'until');
      }
      const filter = where.join(' AND ');
      const total = db.prepare<Record<string, string | number>, { n: number }>(
        `SELECT COUNT(*) AS n FROM cs_audit WHERE ${filter}`,
      );
      const bounds = [
        ...(query.afterId === undefined ? [] : ['id > @afterId']),
        ...(query.beforeId === undefined ? [] : ['id < @beforeId']),
      ];
      const pageFilter = [filter, ...bounds].join(' AND ');
      const pageParams = {
        ...params,
        ...(query.afterId === undefined ? {} : { afterId: query.afterId }),
        ...(query.beforeId === undefined ? {} : { beforeId: query.beforeId }),
      };
      const limit = Math.max(0, Math.floor(query.limit));
      const page = db.prepare<Record<string, string | number>, AuditRow>(
        `SELECT * FROM cs_audit WHERE ${pageFilter} ORDER BY id ${query.order === 'desc' ? 'DESC' : 'ASC'} LIMIT @limit`,
      );
      const read = db.transaction(() => ({
        entries: page.all({ ...pageParams, limit }).map(toAuditEntry),
        total: total.get(params)?.n ?? 0,
      }));
      return read();
    },

    async recordUsage(instanceId, counts) {
      if (counts.length > 0) record.immediate(instanceId, counts);
    },

    async readUsage(keyIds, sinceSecond, excludeInstance) {
      if (keyIds.length === 0) return [];
      const placeholders = keyIds.map(() => '?').join(', ');
      const exclude = excludeInstance === undefined ? '' : 'AND instance_id <> ?';
      const rows = db
        .prepare<(string | number)[], { key_id: string; second: number; count: number }>(
          `SELECT key_id, second, SUM(count) AS count FROM cs_usage
           WHERE key_id IN (${placeholders}) AND second >= ? ${exclude}
           GROUP BY key_id, second ORDER BY key_id, second`,
        )
        .all(...keyIds, sinceSecond, ...(excludeInstance === undefined ? [] : [excludeInstance]));
      return rows.map((row) => ({ keyId: row.key_id, second: row.second, count: row.count }));
    },

    async ping() {
      db.prepare('SELECT 1').get();
    },

    async close() {
      if (db.open) db.close();
    },
  };
}
