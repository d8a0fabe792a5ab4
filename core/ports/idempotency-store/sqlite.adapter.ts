import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import type {
  IdempotencyRecord,
  IdempotencyState,
  IdempotencyStore,
  StoredResponse,
} from './idempotency-store.port.ts';

export interface SqliteIdempotencyStoreOptions {
  /** SQLite database file (created with its directory if missing), or `:memory:`. */
  readonly file: string;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    token TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    response_json TEXT,
    PRIMARY KEY (scope, key)
  )`,
  'CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at_ms)',
];

interface KeyRow {
  scope: string;
  key: string;
  fingerprint: string;
  token: string;
  state: string;
  created_at_ms: number;
  expires_at_ms: number;
  response_json: string | null;
}

const toRecord = (r: KeyRow): IdempotencyRecord => ({
  scope: r.scope,
  key: r.key,
  fingerprint: r.fingerprint,
  token: r.token,
  state: r.state as IdempotencyState,
  createdAtMs: r.created_at_ms,
  expiresAtMs: r.expires_at_ms,
  response: r.response_json === null ? null : (JSON.parse(r.response_json) as StoredResponse),
});

/**
 * The idempotency store in one SQLite file (the embedded runtime's `idempotency.db`). A claim is
 * one write transaction (`BEGIN IMMEDIATE`: read the key, then insert or replace an expired
 * record), so it is atomic across processes sharing the file; completion and release are single
 * statements guarded by the token (a release keeps the record, lapsed).
 */
export function createSqliteIdempotencyStore(options: SqliteIdempotencyStoreOptions): IdempotencyStore {
  const db: Database = openDatabase(options.file);
  migrate(db, 'idempotency-store-001', MIGRATIONS);

  const byKey = db.prepare<[string, string], KeyRow>('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?');
  const put = db.prepare(
    `INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, token, state, created_at_ms, expires_at_ms, response_json)
     VALUES (@scope, @key, @fingerprint, @token, 'in-progress', @created_at_ms, @expires_at_ms, NULL)`,
  );
  const completeHeld = db.prepare<[string, number, string, string, string]>(
    `UPDATE idempotency_keys SET state = 'completed', response_json = ?, expires_at_ms = ?
     WHERE scope = ? AND key = ? AND token = ? AND state = 'in-progress'`,
  );
  const releaseHeld = db.prepare<[number, string, string, string, number]>(
    `UPDATE idempotency_keys SET expires_at_ms = ?
     WHERE scope = ? AND key = ? AND token = ? AND state = 'in-progress' AND expires_at_ms > ?`,
  );
  const renewHeld = db.prepare<[number, string, string, string, number]>(
    `UPDATE idempotency_keys SET expires_at_ms = ?
     WHERE scope = ? AND key = ? AND token = ? AND state = 'in-progress' AND expires_at_ms > ?`,
  );
  const removeExpired = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE expires_at_ms <= ?');

  const claim = db.transaction(
    (request: Parameters<IdempotencyStore['claim']>[0]): Awaited<ReturnType<IdempotencyStore['claim']>> => {
      const row = byKey.get(request.scope, request.key);
      if (row && row.expires_at_ms > request.nowMs) return { claimed: false, record: toRecord(row) };
      const replaced = row ? toRecord(row) : null;
      const record: IdempotencyRecord = {
        scope: request.scope,
        key: request.key,
        fingerprint: request.fingerprint,
        token: request.token,
        state: 'in-progress',
        createdAtMs: request.nowMs,
        expiresAtMs: request.expiresAtMs,
        response: null,
      };
      put.run({
        scope: record.scope,
        key: record.key,
        fingerprint: record.fingerprint,
        token: record.token,
        created_at_ms: record.createdAtMs,
        expires_at_ms: record.expiresAtMs,
      });
      return { claimed: true, record, replaced };
    },
  );

  return {
    kind: 'sqlite',
    async claim(request) {
      return claim.immediate(request);
    },
    async complete(scope, key, token, response, expiresAtMs) {
      return completeHeld.run(JSON.stringify(response), expiresAtMs, scope, key, token).changes === 1;
    },
    async release(scope, key, token, nowMs) {
      return releaseHeld.run(nowMs, scope, key, token, nowMs).changes === 1;
    },
    async renew(scope, key, token, nowMs, expiresAtMs) {
      return renewHeld.run(expiresAtMs, scope, key, token, nowMs).changes === 1;
    },
    async lookup(scope, key, nowMs) {
      const row = byKey.get(scope, key);
      return row && row.expires_at_ms > nowMs ? toRecord(row) : null;
    },
    async sweep(nowMs) {
      return removeExpired.run(nowMs).changes;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
