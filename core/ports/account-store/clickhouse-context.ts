import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { describeError } from '../../errors/describe-error.ts';
import { engineUnavailable, KbError } from '../../errors/kb-error.ts';
import { countEngineRequest } from '../../util/engine-requests.ts';

export interface ClickHouseAccountStoreOptions {
  /** HTTP(S) URL of the ClickHouse server, e.g. `http://127.0.0.1:8123`. */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  /** Database holding the account-store tables; created if missing. */
  readonly database: string;
  /**
   * How audit entries are gathered into one insert; each field absent takes its default (25 ms,
   * or 1,000 entries; at most 100,000 held while ClickHouse is unavailable).
   */
  readonly auditBuffer?: {
    readonly flushMs?: number;
    readonly maxRows?: number;
    readonly maxHeldRows?: number;
  };
}

export type QueryParams = Record<string, unknown>;

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
  '3', // UNEXPECTED_END_OF_FILE (a connection cut mid-answer)
  '32', // ATTEMPT_TO_READ_AFTER_EOF
  '236', // ABORTED (the server is shutting down)
  '394', // QUERY_WAS_CANCELLED
  '999', // KEEPER_EXCEPTION
]);

/**
 * Rank of a key state in `api_keys` (`ReplacingMergeTree(version)` keeps the highest): a live key
 * is 0, a revoked key `2^53 − revokedMs`, so any revocation outranks the live row and an earlier
 * revocation outranks a later one. Instants are clamped into `[0, 2^52]` to keep the rank a
 * positive safe integer.
 */
export function keyVersion(revokedMs: number | null): number {
  if (revokedMs === null) return 0;
  const clamped = Math.min(Math.max(Math.floor(revokedMs), 0), 2 ** 52);
  return 2 ** 53 - clamped;
}

/** `DateTime64(3, 'UTC')` text for an instant. */
export function dateTime64(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** The engine name every ClickHouse `engine-unavailable` error carries. */
export const CLICKHOUSE = 'ClickHouse';

/** Turns a client or server failure into a KbError: unreachable or overloaded → retriable `engine-unavailable`. */
export function storeError(error: unknown, what: string): KbError {
  if (error instanceof KbError) return error;
  // An HTTP error answer without a body (a server still starting) reaches here as an Error without a message.
  const message =
    error instanceof Error && error.message === '' && !(error instanceof ClickHouseError)
      ? 'an error answer without a message'
      : describeError(error);
  if (error instanceof ClickHouseError) {
    if (RETRIABLE_SERVER_CODES.has(error.code)) {
      return engineUnavailable(CLICKHOUSE, `ClickHouse is busy (${what}): ${message}`, error);
    }
    return new KbError('internal-error', `ClickHouse rejected ${what}: ${message}`, { cause: error, retriable: false });
  }
  // No answer from the server: refused or reset connections, timeouts, name resolution.
  return engineUnavailable(CLICKHOUSE, `ClickHouse is unreachable (${what}): ${message}`, error);
}

export function connect(options: ClickHouseAccountStoreOptions, database?: string): ClickHouseClient {
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

export async function ensureDatabase(options: ClickHouseAccountStoreOptions): Promise<void> {
  const admin = connect(options);
  try {
    countEngineRequest('clickhouse', 'command');
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

/** Rows read with `FINAL` from `table` (its `columns`) that match `filter`, SQL over its columns with values as `params`. */
export interface RowsQuery {
  readonly table: string;
  readonly columns: string;
  readonly filter: string;
  readonly params: QueryParams;
}

/** A table with one value per row of another: `value` for the row whose id is in `key`. */
export interface SideTable {
  readonly table: string;
  readonly key: string;
  readonly value: string;
}

/** What the parts of the ClickHouse account store share: one client and its query helpers. */
export interface ClickHouseContext {
  readonly client: ClickHouseClient;
  /** Rows of a parameterised query; failures become KbErrors naming `what`. */
  select<T>(what: string, query: string, params?: QueryParams): Promise<T[]>;
  /** Inserts JSON rows into `table` (nothing for no rows); failures become KbErrors naming `what`. */
  insert(what: string, table: string, values: Record<string, unknown>[]): Promise<void>;
  /** Runs a parameterised statement that returns no rows (e.g. a lightweight `DELETE`). */
  command(what: string, query: string, params?: QueryParams): Promise<void>;
  /**
   * The rows `query` reads, by `created_at, id`, and the values `side` holds for them by row id,
   * read at once; failures become KbErrors naming `what`.
   */
  selectWithSideValues<Row extends { readonly id: string }>(
    what: string,
    query: RowsQuery,
    side: SideTable,
  ): Promise<{ rows: Row[]; sideValues: Map<string, string> }>;
}

/** The shared context over a connected client. */
export function createClickHouseContext(client: ClickHouseClient): ClickHouseContext {
  async function select<T>(what: string, query: string, params: QueryParams = {}): Promise<T[]> {
    countEngineRequest('clickhouse', 'query');
    try {
      const result = await client.query({ query, query_params: params, format: 'JSONEachRow' });
      return await result.json<T>();
    } catch (error) {
      throw storeError(error, what);
    }
  }

  async function insert(what: string, table: string, values: Record<string, unknown>[]): Promise<void> {
    if (values.length === 0) return;
    countEngineRequest('clickhouse', 'insert');
    try {
      await client.insert({ table, values, format: 'JSONEachRow' });
    } catch (error) {
      throw storeError(error, what);
    }
  }

  async function command(what: string, query: string, params: QueryParams = {}): Promise<void> {
    countEngineRequest('clickhouse', 'command');
    try {
      await client.command({ query, query_params: params });
    } catch (error) {
      throw storeError(error, what);
    }
  }

  async function selectWithSideValues<Row extends { readonly id: string }>(
    what: string,
    { table, columns, filter, params }: RowsQuery,
    side: SideTable,
  ): Promise<{ rows: Row[]; sideValues: Map<string, string> }> {
    const [rows, values] = await Promise.all([
      select<Row>(what, `SELECT ${columns} FROM ${table} FINAL WHERE ${filter} ORDER BY created_at, id`, params),
      select<{ row_id: string; side_value: string }>(
        what,
        `SELECT ${side.key} AS row_id, ${side.value} AS side_value FROM ${side.table} FINAL
       WHERE ${side.key} IN (SELECT id FROM ${table} WHERE ${filter})`,
        params,
      ),
    ]);
    return { rows, sideValues: new Map(values.map((v) => [v.row_id, v.side_value])) };
  }

  return { client, select, insert, command, selectWithSideValues };
}
