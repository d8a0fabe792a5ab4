import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { KbError } from '../../errors/kb-error.ts';
import { applyClickHouseMigrations } from './clickhouse-migrations.ts';
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
} from './control-rows.ts';
import type { ApiKeyRecord, AuditQuery, ControlStore, SessionRecord, UsageCount } from './control-store.port.ts';

export interface ClickHouseControlStoreOptions {
  /** HTTP(S) URL of the ClickHouse server, e.g. `http://127.0.0.1:8123`. */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  /** Database holding the control-store tables; created if missing. */
  readonly database: string;
}

type QueryParams = Record<string, unknown>;

const USER_COLUMNS = 'id, email, password_hash, role, workspace_ids, created_at';
const SESSION_COLUMNS = 'id, user_id, csrf_token, created_at, expires_at, revoked_at';
const KEY_COLUMNS = 'id, name, prefix, hash, workspace_id, permissions, plan, created_at, revoked_at';
const AUDIT_COLUMNS =
  'id, workspace_id, document_id, action, actor_type, actor_id, timestamp, version, before_json, after_json, change_reason, trace_id';

/**
 * Server error codes worth retrying unchanged: overload, timeouts, network trouble between
 * servers. Every other server error (syntax, unknown table, authentication) is final.
 */
const RETRIABLE_SERVER_CODES = new Set([
  '159', // TIMEOUT_EXCEEDED
  '202', // TOO_MANY_SIMULTANEOUS_QUERIES
  '203', // NO_FREE_CONNECTION
  '209', // SOCKET_TIMEOUT
  '210', // NETWORK_ERROR
  '241', // MEMORY_LIMIT_EXCEEDED
  '242', // TABLE_IS_READ_ONLY
  '252', // TOO_MANY_PARTS
  '319', // UNKNOWN_STATUS_OF_INSERT
  '425', // SYSTEM_ERROR
  '439', // CANNOT_SCHEDULE_TASK
]);

/**
 * Rank of a key state in `api_keys` (`ReplacingMergeTree(version)` keeps the highest): a live key
 * is 0, a revoked key `2^53 − revokedMs`, so any revocation outranks the live row and an earlier
 * revocation outranks a later one. Instants are clamped into `[0, 2^52]` to keep the rank a
 * positive safe integer.
 */
function keyVersion(revokedMs: number | null): number {
  if (revokedMs === null) return 0;
  const clamped = Math.min(Math.max(Math.floor(revokedMs), 0), 2 ** 52);
  return 2 ** 53 - clamped;
}

/** A `sessions` row of a session in the state revoked at `revokedAt` (or live, with null). */
function toSessionRow(session: SessionRecord, revokedAt: string | null): Record<string, unknown> {
  return {
    id: session.id,
    user_id: session.userId,
    csrf_token: session.csrfToken,
    created_at: session.createdAt,
    expires_at: session.expiresAt,
    expires: dateTime64(instant(session.expiresAt, 'expiresAt')),
    revoked_at: revokedAt,
    version: keyVersion(revokedAt === null ? null : instant(revokedAt, 'revokedAt')),
  };
}

/** `DateTime64(3, 'UTC')` text for an instant. */
function dateTime64(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** An `api_keys` row of a key in the state revoked at `revokedAt` (or live, with null). */
function toKeyRow(key: ApiKeyRecord, revokedAt: string | null): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    hash: key.hash,
    workspace_id: key.workspaceId,
    permissions: [...key.permissions],
    plan: key.plan,
    created_at: key.createdAt,
    revoked_at: revokedAt,
    version: keyVersion(revokedAt === null ? null : instant(revokedAt, 'revokedAt')),
  };
}

/** Turns a client or server failure into a KbError: unreachable or overloaded → retriable `engine-unavailable`. */
function storeError(error: unknown, what: string): KbError {
  if (error instanceof KbError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ClickHouseError) {
    if (RETRIABLE_SERVER_CODES.has(error.code)) {
      return new KbError('engine-unavailable', `ClickHouse is busy (${what}): ${message}`, {
        cause: error,
        retriable: true,
      });
    }
    return new KbError('internal-error', `ClickHouse rejected ${what}: ${message}`, { cause: error, retriable: false });
  }
  // No answer from the server: refused or reset connections, timeouts, name resolution.
  return new KbError('engine-unavailable', `ClickHouse is unreachable (${what}): ${message}`, {
    cause: error,
    retriable: true,
  });
}

function connect(options: ClickHouseControlStoreOptions, database?: string): ClickHouseClient {
  return createClient({
    url: options.url,
    username: options.user,
    password: options.password,
    ...(database === undefined ? {} : { database }),
    application: 'kb-document-service',
    // Failures are reported to the caller as KbErrors; the client need not log them too.
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
}

async function ensureDatabase(options: ClickHouseControlStoreOptions): Promise<void> {
  const admin = connect(options);
  try {
    await admin.command({
      query: 'CREATE DATABASE IF NOT EXISTS {database:Identifier}',
      query_params: { database: options.database },
    });
  } catch (error) {
    // DATABASE_ALREADY_EXISTS: another process created it between our check and create.
    if (!(error instanceof ClickHouseError && error.code === '82')) throw error;
  } finally {
    await admin.close();
  }
}

/**
 * The control plane in ClickHouse (schema and table engines: `clickhouse-migrations.ts`). Creates
 * the database if missing and applies pending migrations before resolving. Every value travels as
 * a query parameter or as JSON insert data, never spliced into SQL.
 *
 * - Keys: `ReplacingMergeTree` rows read with `FINAL`, so a revocation is visible to the next read.
 *   `revokeKey` writes only when the key is not yet revoked (first `revokedAt` kept); if two
 *   processes revoke the same key at once, both rows land and the earliest `revokedAt` wins.
 *   `touchKeys` writes to `api_key_last_used`, whose version is the instant itself, so the stored
 *   last use is the latest ever sent. Touches of unknown keys are dropped.
 * - `createKey` checks for an existing id or hash before inserting, since ClickHouse has no unique
 *   constraints. Race window: two `createKey` calls with the same id or hash that both check before
 *   either inserts both succeed; with the same id the rows then collapse into one of the two
 *   records, with the same hash `findKeyByHash` returns the earlier created. Ids are UUIDs and
 *   hashes SHA-256 of random keys, so only a caller re-sending one record can hit it.
 * - Accounts: immutable rows; `createUser` checks for an existing id or email first (the same race
 *   window as keys). Sessions are ranked rows like keys, read with `FINAL`, so a sign-out is
 *   visible to the next read.
 * - Audit entries are immutable rows ordered by `(workspace_id, id)`; re-appending an id collapses
 *   under `FINAL`. `listAudit` reads the page and the total in two queries: an entry appended in
 *   between may be counted but not listed, or the reverse.
 * - Usage: each (instance, key, second) is one row; a re-send replaces it. `readUsage` sums over
 *   instances from `rate_usage FINAL`. Rows expire a day after they were recorded, and the view
 *   `usage_per_minute` (key_id, minute, requests) reports per-key requests per minute.
 * - Failures: no answer from the server, or an overloaded one, rejects with a retriable
 *   `engine-unavailable`; other server errors with `internal-error`; bad timestamps with
 *   `bad-request`.
 */
export async function createClickHouseControlStore(options: ClickHouseControlStoreOptions): Promise<ControlStore> {
  try {
    await ensureDatabase(options);
  } catch (error) {
    throw storeError(error, `creating database ${options.database}`);
  }
  const client = connect(options, options.database);
  try {
    await applyClickHouseMigrations(client);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw storeError(error, 'applying migrations');
  }

  async function select<T>(what: string, query: string, params: QueryParams = {}): Promise<T[]> {
    try {
      const result = await client.query({ query, query_params: params, format: 'JSONEachRow' });
      return await result.json<T>();
    } catch (error) {
      throw storeError(error, what);
    }
  }

  async function insert(what: string, table: string, values: Record<string, unknown>[]): Promise<void> {
    if (values.length === 0) return;
    try {
      await client.insert({ table, values, format: 'JSONEachRow' });
    } catch (error) {
      throw storeError(error, what);
    }
  }

  /** Keys matching `filter` (SQL over `api_keys` columns, values as parameters), with their last use. */
  async function readKeys(what: string, filter: string, params: QueryParams): Promise<ApiKeyRecord[]> {
    const [rows, uses] = await Promise.all([
      select<StoredKeyFields>(
        what,
        `SELECT ${KEY_COLUMNS} FROM api_keys FINAL WHERE ${filter} ORDER BY created_at, id`,
        params,
      ),
      select<{ key_id: string; last_used_at: string }>(
        what,
        `SELECT key_id, last_used_at FROM api_key_last_used FINAL
         WHERE key_id IN (SELECT id FROM api_keys WHERE ${filter})`,
        params,
      ),
    ]);
    const lastUsed = new Map(uses.map((u) => [u.key_id, u.last_used_at]));
    return rows.map((row) => toKeyRecord(row, lastUsed.get(row.id) ?? null));
  }

  /** Accounts matching `filter` (SQL over `users` columns), each with its latest changed password. */
  async function readUsers(what: string, filter: string, params: QueryParams) {
    const [rows, changed] = await Promise.all([
      select<StoredUserFields>(
        what,
        `SELECT ${USER_COLUMNS} FROM users FINAL WHERE ${filter} ORDER BY created_at, id`,
        params,
      ),
      select<{ user_id: string; password_hash: string }>(
        what,
        `SELECT user_id, password_hash FROM user_passwords FINAL
         WHERE user_id IN (SELECT id FROM users WHERE ${filter})`,
        params,
      ),
    ]);
    const hashes = new Map(changed.map((c) => [c.user_id, c.password_hash]));
    return rows.map((row) => toUserRecord({ ...row, password_hash: hashes.get(row.id) ?? row.password_hash }));
  }

  return {
    kind: 'clickhouse',

    async createKey(key) {
      const row = toKeyRow(key, key.revokedAt);
      const lastUsedMs = key.lastUsedAt === null ? null : instant(key.lastUsedAt, 'lastUsedAt');
      const clash = await select<{ id: string }>(
        'checking for an existing key',
        'SELECT id FROM api_keys WHERE id = {id:String} OR hash = {hash:String} LIMIT 1',
        { id: key.id, hash: key.hash },
      );
      if (clash.length > 0) {
        throw new KbError('conflict', 'An API key with this id or hash already exists', { retriable: false });
      }
      await insert('creating a key', 'api_keys', [row]);
      if (key.lastUsedAt !== null && lastUsedMs !== null) {
        await insert('recording last use', 'api_key_last_used', [
          { key_id: key.id, last_used_at: key.lastUsedAt, used_at: dateTime64(lastUsedMs) },
        ]);
      }
    },

    async findKeyByHash(hash) {
      const keys = await readKeys('reading a key', 'hash = {hash:String}', { hash });
      return keys[0] ?? null;
    },

    async findKeysByHash(hashes) {
      const found = new Map<string, ApiKeyRecord>();
      if (hashes.length === 0) return found;
      const keys = await readKeys('reading keys', 'hash IN {hashes:Array(String)}', { hashes: [...new Set(hashes)] });
      // Ordered by creation: the earlier created wins a (racy) duplicate hash, as in findKeyByHash.
      for (const key of keys) if (!found.has(key.hash)) found.set(key.hash, key);
      return found;
    },

    async getKey(id) {
      const keys = await readKeys('reading a key', 'id = {id:String}', { id });
      return keys[0] ?? null;
    },

    async listKeys(workspaceId) {
      return workspaceId === undefined
        ? readKeys('listing keys', '1 = 1', {})
        : readKeys('listing keys', 'workspace_id = {workspaceId:String}', { workspaceId });
    },

    async revokeKey(id, at) {
      instant(at, 'revokedAt');
      const rows = await select<StoredKeyFields>(
        'reading a key',
        `SELECT ${KEY_COLUMNS} FROM api_keys FINAL WHERE id = {id:String}`,
        { id },
      );
      const current = rows[0];
      if (!current) return false;
      if (current.revoked_at !== null) return true;
      await insert('revoking a key', 'api_keys', [toKeyRow(toKeyRecord(current, null), at)]);
      return true;
    },

    async countKeys() {
      const rows = await select<{ n: number }>('counting keys', 'SELECT uniqExact(id) AS n FROM api_keys');
      return Number(rows[0]?.n ?? 0);
    },

    async touchKeys(lastUsed) {
      if (lastUsed.size === 0) return;
      const touches = [...lastUsed].map(([id, at]) => ({ id, at, ms: instant(at, 'lastUsedAt') }));
      const known = await select<{ id: string }>(
        'reading keys',
        'SELECT DISTINCT id FROM api_keys WHERE id IN {ids:Array(String)}',
        { ids: touches.map((t) => t.id) },
      );
      const knownIds = new Set(known.map((row) => row.id));
      await insert(
        'recording last use',
        'api_key_last_used',
        touches
          .filter((t) => knownIds.has(t.id))
          .map((t) => ({ key_id: t.id, last_used_at: t.at, used_at: dateTime64(t.ms) })),
      );
    },

    async createUser(user) {
      const email = user.email.toLowerCase();
      const clash = await select<{ id: string }>(
        'checking for an existing account',
        'SELECT id FROM users WHERE id = {id:String} OR email = {email:String} LIMIT 1',
        { id: user.id, email },
      );
      if (clash.length > 0) {
        throw new KbError('conflict', `An account with this id or email (${email}) already exists`, {
          retriable: false,
        });
      }
      await insert('creating an account', 'users', [
        {
          id: user.id,
          email,
          password_hash: user.passwordHash,
          role: user.role,
          workspace_ids: [...user.workspaceIds],
          created_at: user.createdAt,
        },
      ]);
    },

    async getUser(id) {
      return (await readUsers('reading an account', 'id = {id:String}', { id }))[0] ?? null;
    },

    async findUserByEmail(email) {
      const users = await readUsers('reading an account', 'email = {email:String}', { email: email.toLowerCase() });
      return users[0] ?? null;
    },

    async listUsers() {
      return readUsers('listing accounts', '1 = 1', {});
    },

    async setPassword(userId, passwordHash, at) {
      const ms = instant(at, 'at');
      const known = await select<{ id: string }>(
        'reading an account',
        'SELECT id FROM users WHERE id = {id:String} LIMIT 1',
        { id: userId },
      );
      if (known.length === 0) return false;
      await insert('changing a password', 'user_passwords', [
        { user_id: userId, password_hash: passwordHash, changed_at: dateTime64(ms) },
      ]);
      return true;
    },

    async revokeUserSessions(userId, at, exceptId) {
      instant(at, 'revokedAt');
      const live = await select<StoredSessionFields>(
        'reading sessions',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL
         WHERE user_id = {userId:String} AND revoked_at IS NULL AND id != {except:String}`,
        { userId, except: exceptId ?? '' },
      );
      await insert(
        'revoking sessions',
        'sessions',
        live.map((row) => toSessionRow(toSessionRecord(row), at)),
      );
      return live.length;
    },

    async countUsers() {
      const rows = await select<{ n: number }>('counting accounts', 'SELECT uniqExact(id) AS n FROM users');
      return Number(rows[0]?.n ?? 0);
    },

    async createSession(session) {
      const row = toSessionRow(session, session.revokedAt);
      const clash = await select<{ id: string }>(
        'checking for an existing session',
        'SELECT id FROM sessions WHERE id = {id:String} LIMIT 1',
        { id: session.id },
      );
      if (clash.length > 0) {
        throw new KbError('conflict', 'A session with this id already exists', { retriable: false });
      }
      await insert('creating a session', 'sessions', [row]);
    },

    async getSession(id) {
      const rows = await select<StoredSessionFields>(
        'reading a session',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL WHERE id = {id:String}`,
        { id },
      );
      return rows[0] ? toSessionRecord(rows[0]) : null;
    },

    async revokeSession(id, at) {
      instant(at, 'revokedAt');
      const rows = await select<StoredSessionFields>(
        'reading a session',
        `SELECT ${SESSION_COLUMNS} FROM sessions FINAL WHERE id = {id:String}`,
        { id },
      );
      const current = rows[0];
      if (!current) return false;
      if (current.revoked_at !== null) return true;
      await insert('revoking a session', 'sessions', [toSessionRow(toSessionRecord(current), at)]);
      return true;
    },

    async appendAudit(entry) {
      const ms = instant(entry.timestamp, 'timestamp');
      await insert('appending an audit entry', 'audit_log', [{ ...toAuditInsertRow(entry), at: dateTime64(ms) }]);
    },

    async listAudit(query: AuditQuery) {
      const where = ['workspace_id = {workspaceId:String}'];
      const params: QueryParams = { workspaceId: query.workspaceId };
      if (query.documentId !== undefined) {
        where.push('document_id = {documentId:String}');
        params.documentId = query.documentId;
      }
      if (query.action !== undefined) {
        where.push('action = {action:String}');
        params.action = query.action;
      }
      if (query.since !== undefined) {
        where.push(`at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`);
        params.since = instant(query.since, 'since');
      }
      if (query.until !== undefined) {
        where.push(`at <= fromUnixTimestamp64Milli({until:Int64}, 'UTC')`);
        params.until = instant(query.until, 'until');
      }
      const filter = where.join(' AND ');
      const pageFilter = query.afterId === undefined ? filter : `${filter} AND id > {afterId:String}`;
      const limit = Math.max(0, Math.floor(query.limit));
      const [rows, totals] = await Promise.all([
        select<AuditRow>(
          'listing audit entries',
          `SELECT ${AUDIT_COLUMNS} FROM audit_log FINAL WHERE ${pageFilter} ORDER BY id LIMIT {limit:UInt32}`,
          { ...params, ...(query.afterId === undefined ? {} : { afterId: query.afterId }), limit },
        ),
        select<{ n: number }>(
          'counting audit entries',
          `SELECT count() AS n FROM audit_log FINAL WHERE ${filter}`,
          params,
        ),
      ]);
      return { entries: rows.map(toAuditEntry), total: Number(totals[0]?.n ?? 0) };
    },

    async recordUsage(instanceId, counts: readonly UsageCount[]) {
      await insert(
        'recording usage',
        'rate_usage',
        counts.map((c) => ({ instance: instanceId, key_id: c.keyId, second: c.second, count: c.count })),
      );
    },

    async readUsage(keyIds, sinceSecond, excludeInstance) {
      if (keyIds.length === 0) return [];
      const exclude = excludeInstance === undefined ? '' : 'AND instance != {exclude:String}';
      const rows = await select<{ key_id: string; second: number; count: number }>(
        'reading usage',
        `SELECT key_id, second, toUInt32(sum(count)) AS count FROM rate_usage FINAL
         WHERE key_id IN {keyIds:Array(String)} AND second >= {since:Int64} ${exclude}
         GROUP BY key_id, second ORDER BY key_id, second`,
        {
          keyIds: [...keyIds],
          since: Math.floor(sinceSecond),
          ...(excludeInstance === undefined ? {} : { exclude: excludeInstance }),
        },
      );
      return rows.map((row) => ({ keyId: row.key_id, second: Number(row.second), count: Number(row.count) }));
    },

    async ping() {
      await select('ping', 'SELECT 1 AS ok');
    },

    async close() {
      await client.close();
    },
  };
}
