import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client';
import { countEngineRequest } from '../../util/engine-requests.ts';

/**
 * One schema step of the ClickHouse account store. Every statement must be idempotent
 * (`IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`, …): two processes starting at once may both run a
 * migration before either has recorded it, and a process may stop between a statement and the
 * record.
 */
export interface ClickHouseMigration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/**
 * The account-store schema, oldest first. Never edit an applied migration; add a new one.
 *
 * - `api_keys`: one row per key state, `ReplacingMergeTree(version)` by `id`. A revocation is a new
 *   row; `version` ranks states so that any revoked row outranks the live one and an earlier
 *   revocation outranks a later one (see the adapter), which makes concurrent revocations
 *   converge on the earliest time whatever order the rows land in. Read with `FINAL`.
 * - `api_key_last_used`: last use per key, `ReplacingMergeTree(used_at)`, so the latest instant
 *   wins and a late or repeated touch never moves it back. Kept apart from `api_keys` so that the
 *   frequent touches of every API process never rewrite a key row (a touch based on a stale read
 *   could otherwise undo a revocation).
 * - `audit_log`: `ReplacingMergeTree` ordered by `(workspace_id, id)`; entries are immutable and
 *   identical re-appends collapse, so `FINAL` reads make `appendAudit` idempotent by id.
 * - `rate_usage`: `(instance, key_id, second) → count`, `ReplacingMergeTree` without a version, so
 *   the last row sent for a triple wins; rows live one day after they were recorded.
 * - `users`: dashboard accounts, one immutable row per account, `ReplacingMergeTree` by `id`.
 * - `user_passwords`: an account's password hash since it was changed, `ReplacingMergeTree(changed_at)`
 *   by `user_id` (the latest change wins); it overrides the hash in `users`.
 * - `sessions`: one row per session state, `ReplacingMergeTree(version)` by `id`, ranked like
 *   `api_keys` (a revocation outranks the live row, the earliest revocation wins); rows expire a
 *   day after the session does.
 * - `usage_per_minute`: a plain view, requests per key per minute summed over instances from
 *   `rate_usage FINAL` (a materialized view would add re-sent counts instead of replacing them).
 *   Query it as `SELECT minute, requests FROM usage_per_minute WHERE key_id = … ORDER BY minute`.
 */
export const CLICKHOUSE_MIGRATIONS: readonly ClickHouseMigration[] = [
  {
    version: 1,
    name: 'api keys, audit log, rate usage',
    statements: [
      `CREATE TABLE IF NOT EXISTS api_keys (
        id String,
        name String,
        prefix String,
        hash String,
        workspace_id String,
        permissions Array(LowCardinality(String)),
        plan LowCardinality(String),
        created_at String,
        revoked_at Nullable(String),
        version UInt64,
        INDEX api_keys_hash hash TYPE bloom_filter GRANULARITY 1,
        INDEX api_keys_workspace workspace_id TYPE bloom_filter GRANULARITY 1
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY id`,
      `CREATE TABLE IF NOT EXISTS api_key_last_used (
        key_id String,
        last_used_at String,
        used_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(used_at)
      ORDER BY key_id`,
      `CREATE TABLE IF NOT EXISTS audit_log (
        id String,
        workspace_id String,
        document_id String,
        action LowCardinality(String),
        actor_type LowCardinality(String),
        actor_id String,
        timestamp String,
        at DateTime64(3, 'UTC'),
        version Nullable(UInt32),
        before_json Nullable(String),
        after_json Nullable(String),
        change_reason Nullable(String),
        trace_id String,
        INDEX audit_log_document document_id TYPE bloom_filter GRANULARITY 1
      ) ENGINE = ReplacingMergeTree
      ORDER BY (workspace_id, id)`,
      `CREATE TABLE IF NOT EXISTS rate_usage (
        instance String,
        key_id String,
        second UInt32,
        count UInt32,
        recorded_at DateTime('UTC') DEFAULT now()
      ) ENGINE = ReplacingMergeTree
      ORDER BY (key_id, second, instance)
      TTL recorded_at + INTERVAL 1 DAY`,
    ],
  },
  {
    version: 2,
    name: 'per-key requests per minute view',
    statements: [
      `CREATE VIEW IF NOT EXISTS usage_per_minute AS
      SELECT key_id, toStartOfMinute(toDateTime(second, 'UTC')) AS minute, sum(count) AS requests
      FROM rate_usage FINAL
      GROUP BY key_id, minute`,
    ],
  },
  {
    version: 3,
    name: 'dashboard accounts and sessions',
    statements: [
      `CREATE TABLE IF NOT EXISTS users (
        id String,
        email String,
        password_hash String,
        role LowCardinality(String),
        workspace_ids Array(String),
        created_at String,
        INDEX users_email email TYPE bloom_filter GRANULARITY 1
      ) ENGINE = ReplacingMergeTree
      ORDER BY id`,
      `CREATE TABLE IF NOT EXISTS sessions (
        id String,
        user_id String,
        csrf_token String,
        created_at String,
        expires_at String,
        expires DateTime64(3, 'UTC'),
        revoked_at Nullable(String),
        version UInt64
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY id
      TTL toDateTime(expires) + INTERVAL 1 DAY`,
    ],
  },
  {
    version: 4,
    name: 'dashboard password changes',
    statements: [
      `CREATE TABLE IF NOT EXISTS user_passwords (
        user_id String,
        password_hash String,
        changed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(changed_at)
      ORDER BY user_id`,
    ],
  },
];

const SCHEMA_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version UInt32,
  name String,
  applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY version`;

/** Error codes meaning "what an IF NOT EXISTS statement wanted is already there" (a concurrent creator won). */
const ALREADY_THERE = new Set(['57', '82']); // TABLE_ALREADY_EXISTS, DATABASE_ALREADY_EXISTS

async function runIdempotent(client: ClickHouseClient, query: string): Promise<void> {
  try {
    countEngineRequest('clickhouse', 'command');
    await client.command({ query });
  } catch (error) {
    if (error instanceof ClickHouseError && ALREADY_THERE.has(error.code)) return;
    throw error;
  }
}

/**
 * Brings the client's database up to {@link CLICKHOUSE_MIGRATIONS}: creates `schema_migrations` if
 * missing, runs each migration not recorded there, in version order, and records it. Safe when
 * several processes start at once (idempotent statements; duplicate records collapse in the
 * `ReplacingMergeTree`). Returns the versions this call applied.
 */
export async function applyClickHouseMigrations(
  client: ClickHouseClient,
  migrations: readonly ClickHouseMigration[] = CLICKHOUSE_MIGRATIONS,
): Promise<number[]> {
  await runIdempotent(client, SCHEMA_MIGRATIONS_TABLE);
  countEngineRequest('clickhouse', 'query');
  const rows = await (
    await client.query({ query: 'SELECT version FROM schema_migrations FINAL', format: 'JSONEachRow' })
  ).json<{ version: number }>();
  const done = new Set(rows.map((row) => Number(row.version)));
  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements) await runIdempotent(client, statement);
    countEngineRequest('clickhouse', 'insert');
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: migration.version, name: migration.name }],
      format: 'JSONEachRow',
    });
    applied.push(migration.version);
  }
  return applied;
}
