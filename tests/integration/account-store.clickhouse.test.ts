import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../core/model/account-records.model.ts';
import type { AccountStore } from '../../core/ports/account-store/account-store.port.ts';
import { createClickHouseAccountStore } from '../../core/ports/account-store/clickhouse.adapter.ts';
import { connect, ensureDatabase } from '../../core/ports/account-store/clickhouse-context.ts';
import {
  applyClickHouseMigrations,
  CLICKHOUSE_MIGRATIONS,
} from '../../core/ports/account-store/clickhouse-migrations.ts';
import { closedPort } from '../../support/ports.ts';
import { describeAccountStoreContract } from '../contract/account-store.contract.ts';
import { clickhouseAdminClient, clickhouseTestOptions, dropClickHouseDatabase } from '../support/clickhouse-test-db.ts';

async function rows<T>(
  client: ClickHouseClient,
  query: string,
  query_params: Record<string, unknown> = {},
): Promise<T[]> {
  return (await client.query({ query, query_params, format: 'JSONEachRow' })).json<T>();
}

function key(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = randomUUID();
  return {
    id,
    name: 'integration key',
    prefix: 'ink_abcdefgh',
    hash: randomUUID().replaceAll('-', '').repeat(2),
    workspaceId: `ws-${randomUUID()}`,
    permissions: ['read'],
    plan: 'starter',
    createdAt: '2024-05-01T10:00:00.000Z',
    revokedAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

describeAccountStoreContract('clickhouse', async () => {
  const options = clickhouseTestOptions();
  return { store: await createClickHouseAccountStore(options), cleanup: () => dropClickHouseDatabase(options) };
});

describe('clickhouse account store', () => {
  const options = clickhouseTestOptions();
  let store: AccountStore;
  let admin: ClickHouseClient;

  beforeAll(async () => {
    admin = clickhouseAdminClient(options);
    store = await createClickHouseAccountStore(options);
  });

  afterAll(async () => {
    await store?.close();
    await admin?.close();
    await dropClickHouseDatabase(options);
  });

  it('creates a missing database and applies each migration once when two processes start at once', async () => {
    const fresh = clickhouseTestOptions();
    try {
      const [a, b] = await Promise.all([createClickHouseAccountStore(fresh), createClickHouseAccountStore(fresh)]);
      await a.ping();
      await b.ping();
      const k = key();
      await a.createKey(k);
      expect(await b.getKey(k.id)).toEqual(k);
      await a.close();
      await b.close();

      const versions = await rows<{ version: number }>(
        admin,
        'SELECT version FROM {db:Identifier}.schema_migrations FINAL ORDER BY version',
        { db: fresh.database },
      );
      expect(versions.map((v) => v.version)).toEqual(CLICKHOUSE_MIGRATIONS.map((m) => m.version));

      // A restart finds every migration recorded and writes no new record.
      const count = async () =>
        (
          await rows<{ n: number }>(admin, 'SELECT count() AS n FROM {db:Identifier}.schema_migrations', {
            db: fresh.database,
          })
        )[0]?.n;
      const before = await count();
      const again = await createClickHouseAccountStore(fresh);
      expect(await again.getKey(k.id)).toEqual(k);
      await again.close();
      expect(await count()).toBe(before);
    } finally {
      await dropClickHouseDatabase(fresh);
    }
  });

  it('reads accounts stored before generated passwords were marked as not marked, and marks new ones', async () => {
    const fresh = clickhouseTestOptions();
    try {
      // A database as a release before the mark left it (migrations 1–4), with an account whose
      // password was never changed and one whose password was.
      await ensureDatabase(fresh);
      const old = connect(fresh, fresh.database);
      await applyClickHouseMigrations(
        old,
        CLICKHOUSE_MIGRATIONS.filter((m) => m.version <= 4),
      );
      const account = (id: string) => ({
        id,
        email: `${id}@example.com`,
        password_hash: 'scrypt$old',
        role: 'member',
        workspace_ids: ['default'],
        created_at: '2024-01-01T00:00:00.000Z',
      });
      await old.insert({ table: 'users', values: [account('kept'), account('changed')], format: 'JSONEachRow' });
      await old.insert({
        table: 'user_passwords',
        values: [{ user_id: 'changed', password_hash: 'scrypt$changed', changed_at: '2024-02-01 00:00:00.000' }],
        format: 'JSONEachRow',
      });
      await old.close();

      const upgraded = await createClickHouseAccountStore(fresh);
      try {
        expect(await upgraded.getUser('kept')).toMatchObject({ passwordHash: 'scrypt$old', passwordGenerated: false });
        expect(await upgraded.findUserByEmail('changed@example.com')).toMatchObject({
          passwordHash: 'scrypt$changed',
          passwordGenerated: false,
        });
        expect(await upgraded.setPassword('kept', 'scrypt$reset', '2030-01-01T00:00:00.000Z', true)).toBe(true);
        expect(await upgraded.getUser('kept')).toMatchObject({ passwordHash: 'scrypt$reset', passwordGenerated: true });
      } finally {
        await upgraded.close();
      }
      const versions = await rows<{ version: number }>(
        admin,
        'SELECT version FROM {db:Identifier}.schema_migrations FINAL ORDER BY version',
        { db: fresh.database },
      );
      expect(versions.map((v) => v.version)).toEqual(CLICKHOUSE_MIGRATIONS.map((m) => m.version));
    } finally {
      await dropClickHouseDatabase(fresh);
    }
  });

  it("reads audit entries stored before actors had names as before, and keeps a source's name on new ones", async () => {
    const fresh = clickhouseTestOptions();
    try {
      // A database as a release before source actors left it (migrations 1–5), with a key's entry.
      await ensureDatabase(fresh);
      const old = connect(fresh, fresh.database);
      await applyClickHouseMigrations(
        old,
        CLICKHOUSE_MIGRATIONS.filter((m) => m.version <= 5),
      );
      const workspaceId = `ws-${randomUUID()}`;
      await old.insert({
        table: 'audit_log',
        values: [
          {
            id: '0190a000-0000-7000-8000-000000000001',
            workspace_id: workspaceId,
            document_id: 'doc-1',
            action: 'create',
            actor_type: 'api_key',
            actor_id: 'key-1',
            timestamp: '2024-07-01T00:00:00.000Z',
            at: '2024-07-01 00:00:00.000',
            version: 1,
            before_json: null,
            after_json: null,
            change_reason: null,
            trace_id: 'trace-1',
          },
        ],
        format: 'JSONEachRow',
      });
      await old.close();

      const upgraded = await createClickHouseAccountStore(fresh);
      try {
        const bySource = {
          id: '0190a000-0000-7000-8000-000000000002',
          action: 'update' as const,
          workspaceId,
          documentId: 'doc-1',
          actor: { type: 'source' as const, id: 'source-1', name: 'handbook' },
          timestamp: '2024-07-02T00:00:00.000Z',
          version: 2,
          before: null,
          after: null,
          changeReason: 'sync: changed at source',
          traceId: 'run-1',
        };
        await upgraded.appendAudit(bySource);
        const { entries } = await upgraded.listAudit({ workspaceId, limit: 10 });
        expect(entries.map((e) => e.actor)).toEqual([{ type: 'api_key', id: 'key-1' }, bySource.actor]);
        expect(entries[1]).toEqual(bySource);
      } finally {
        await upgraded.close();
      }
    } finally {
      await dropClickHouseDatabase(fresh);
    }
  });

  it('shows a revocation to the very next read, and a later touch does not undo it', async () => {
    const k = key();
    await store.createKey(k);
    await store.touchKeys(new Map([[k.id, '2024-06-01T00:00:00.000Z']]));
    expect(await store.revokeKey(k.id, '2024-06-02T00:00:00.000Z')).toBe(true);
    expect((await store.findKeyByHash(k.hash))?.revokedAt).toBe('2024-06-02T00:00:00.000Z');
    await store.touchKeys(new Map([[k.id, '2024-06-03T00:00:00.000Z']]));
    expect(await store.getKey(k.id)).toEqual({
      ...k,
      revokedAt: '2024-06-02T00:00:00.000Z',
      lastUsedAt: '2024-06-03T00:00:00.000Z',
    });
  });

  it('sees keys created and revoked by another process on the same database', async () => {
    const other = await createClickHouseAccountStore(options);
    try {
      const k = key();
      await other.createKey(k);
      expect(await store.findKeyByHash(k.hash)).toEqual(k);
      await other.revokeKey(k.id, '2024-07-01T00:00:00.000Z');
      expect((await store.getKey(k.id))?.revokedAt).toBe('2024-07-01T00:00:00.000Z');
      await expect(store.createKey(key({ hash: k.hash }))).rejects.toMatchObject({ code: 'conflict' });
    } finally {
      await other.close();
    }
  });

  it('stores quotes, backslashes and SQL in values as plain text', async () => {
    const workspaceId = `ws-'; DROP TABLE api_keys; --${randomUUID()}`;
    const k = key({ name: `it's a \\"name\\" {id:String} \u0000 ü`, workspaceId });
    await store.createKey(k);
    expect(await store.listKeys(workspaceId)).toEqual([k]);
    const entry = {
      id: randomUUID(),
      action: 'update' as const,
      workspaceId,
      documentId: "doc') OR 1=1 --",
      actor: { type: 'api_key' as const, id: k.id },
      timestamp: '2024-06-01T00:00:00.000Z',
      version: 3,
      before: { version: 2, metadata: { q: '\'"\\' } },
      after: { version: 3, metadata: null },
      changeReason: "it's fixed",
      traceId: 'trace',
    };
    await store.appendAudit(entry);
    expect(await store.listAudit({ workspaceId, documentId: entry.documentId, limit: 10 })).toEqual({
      entries: [entry],
      total: 1,
    });
  });

  it('reports requests per key and minute in usage_per_minute, counting a re-sent second once', async () => {
    const k = randomUUID();
    const minute = 1_700_000_040; // a minute boundary
    await store.recordUsage('api-1', [
      { keyId: k, second: minute, count: 10 },
      { keyId: k, second: minute + 59, count: 5 },
      { keyId: k, second: minute + 60, count: 7 },
    ]);
    await store.recordUsage('api-1', [{ keyId: k, second: minute + 59, count: 6 }]);
    await store.recordUsage('api-2', [{ keyId: k, second: minute + 1, count: 4 }]);
    const perMinute = await rows<{ minute: number; requests: number }>(
      admin,
      `SELECT toUnixTimestamp(minute) AS minute, requests FROM {db:Identifier}.usage_per_minute
       WHERE key_id = {k:String} ORDER BY minute`,
      { db: options.database, k },
    );
    expect(perMinute).toEqual([
      { minute, requests: 20 },
      { minute: minute + 60, requests: 7 },
    ]);
  });

  it('rejects bad timestamps with bad-request before writing anything', async () => {
    const k = key();
    await store.createKey(k);
    await expect(store.revokeKey(k.id, 'yesterday')).rejects.toMatchObject({ code: 'bad-request' });
    await expect(store.touchKeys(new Map([[k.id, 'soon']]))).rejects.toMatchObject({ code: 'bad-request' });
    await expect(store.listAudit({ workspaceId: 'ws', since: 'last week', limit: 10 })).rejects.toMatchObject({
      code: 'bad-request',
    });
    expect(await store.getKey(k.id)).toEqual(k);
  });

  it('rejects with a retriable engine-unavailable when ClickHouse does not answer', async () => {
    const unreachable = { ...options, url: `http://127.0.0.1:${await closedPort()}` };
    await expect(createClickHouseAccountStore(unreachable)).rejects.toMatchObject({
      code: 'engine-unavailable',
      retriable: true,
    });
  });
});
