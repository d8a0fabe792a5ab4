import { randomUUID } from 'node:crypto';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { loadConfig } from '../../core/config/config.ts';
import type { ClickHouseAccountStoreOptions } from '../../core/ports/account-store/clickhouse.adapter.ts';

/**
 * ClickHouse settings from the environment (`eval "$(deploy/native/env)"`), with a fresh database
 * name. Throws, saying how to start the engine, when `KB_CLICKHOUSE_URL` is not set.
 */
export function clickhouseTestOptions(): ClickHouseAccountStoreOptions {
  const { clickhouse } = loadConfig();
  if (clickhouse.url === null) {
    throw new Error(
      'KB_CLICKHOUSE_URL is not set: start the engines with `deploy/native/up clickhouse` and run ' +
        '`eval "$(deploy/native/env)"` before the integration tests',
    );
  }
  return {
    url: clickhouse.url,
    user: clickhouse.user,
    password: clickhouse.password,
    database: `kbtest_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
  };
}

/** A client on the server of `options`, outside any database (64-bit integers as JSON numbers). */
export function clickhouseAdminClient(options: ClickHouseAccountStoreOptions): ClickHouseClient {
  return createClient({
    url: options.url,
    username: options.user,
    password: options.password,
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
}

/** Drops the test database of `options`, if it exists. */
export async function dropClickHouseDatabase(options: ClickHouseAccountStoreOptions): Promise<void> {
  const admin = clickhouseAdminClient(options);
  try {
    await admin.command({ query: 'DROP DATABASE IF EXISTS {db:Identifier}', query_params: { db: options.database } });
  } finally {
    await admin.close();
  }
}
