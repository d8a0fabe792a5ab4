import type { AccountStore } from './account-store.port.ts';
import { createClickHouseAccounts } from './clickhouse-accounts.ts';
import { createClickHouseAudit, DEFAULT_AUDIT_BUFFER } from './clickhouse-audit.ts';
import {
  type ClickHouseAccountStoreOptions,
  connect,
  createClickHouseContext,
  ensureDatabase,
  storeError,
} from './clickhouse-context.ts';
import { createClickHouseKeys } from './clickhouse-keys.ts';
import { applyClickHouseMigrations } from './clickhouse-migrations.ts';
import { createClickHouseUsage } from './clickhouse-usage.ts';

export type { ClickHouseAccountStoreOptions } from './clickhouse-context.ts';

/**
 * The account store in ClickHouse (schema and table engines: `clickhouse-migrations.ts`). Creates
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
 *   window as keys). A password change is a `user_passwords` row carrying the hash and the
 *   generated-password mark; the latest change overrides both in `users`. Sessions are ranked rows like keys, read with `FINAL`, so a sign-out is
 *   visible to the next read.
 * - Audit entries are immutable rows ordered by `(workspace_id, id)`; re-appending an id collapses
 *   under `FINAL`. Entries appended at about the same time go out in one insert, a flush interval
 *   after the first (`auditBuffer.flushMs`, 25 ms unless set; the runtime sets KB_AUDIT_FLUSH_MS)
 *   or at 1,000 entries. `appendAudit` resolves once its entry is written, so a process killed
 *   after answering a write keeps its entry; while ClickHouse is unavailable it resolves after the
 *   failed insert and the entry is held and tried again every second (a process killed before
 *   ClickHouse is back loses what it held), and written by `close` (SIGTERM) and before this
 *   store's `listAudit`. `listAudit` reads the page and the total in two queries: an entry appended in
 *   between may be counted but not listed, or the reverse.
 * - Usage: each (instance, key, second) is one row; a re-send replaces it. `readUsage` sums over
 *   instances from `rate_usage FINAL`. Rows expire a day after they were recorded, and the view
 *   `usage_per_minute` (key_id, minute, requests) reports per-key requests per minute. The rate
 *   limiter also writes rows of key `~instance`, the presence of each API process (not a key).
 * - Failures: no answer from the server, or an overloaded one, rejects with a retriable
 *   `engine-unavailable`; other server errors with `internal-error`; bad timestamps with
 *   `bad-request`.
 */
export async function createClickHouseAccountStore(options: ClickHouseAccountStoreOptions): Promise<AccountStore> {
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
  const context = createClickHouseContext(client);
  const audit = createClickHouseAudit(context, { ...DEFAULT_AUDIT_BUFFER, ...options.auditBuffer });

  return {
    kind: 'clickhouse',
    ...createClickHouseKeys(context),
    ...createClickHouseAccounts(context),
    appendAudit: audit.appendAudit,
    listAudit: audit.listAudit,
    ...createClickHouseUsage(context),

    async ping() {
      await context.select('ping', 'SELECT 1 AS ok');
    },

    async close() {
      try {
        await audit.close();
      } finally {
        await client.close();
      }
    },
  };
}
