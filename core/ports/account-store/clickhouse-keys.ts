import { KbError } from '../../errors/kb-error.ts';
import type { ApiKeyRecord } from '../../model/account-records.model.ts';
import { instant, type StoredKeyFields, toKeyRecord } from './account-rows.ts';
import type { AccountStore } from './account-store.port.ts';
import { type ClickHouseContext, dateTime64, keyVersion, type QueryParams } from './clickhouse-context.ts';

const KEY_COLUMNS = 'id, name, prefix, hash, workspace_id, permissions, plan, created_at, revoked_at';

type KeyMethods = Pick<
  AccountStore,
  'createKey' | 'findKeyByHash' | 'findKeysByHash' | 'getKey' | 'listKeys' | 'revokeKey' | 'countKeys' | 'touchKeys'
>;

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

/** The API-key part of the ClickHouse account store (see `createClickHouseAccountStore`). */
export function createClickHouseKeys({ select, insert, selectWithSideValues }: ClickHouseContext): KeyMethods {
  /** Keys matching `filter` (SQL over `api_keys` columns, values as parameters), with their last use. */
  async function readKeys(what: string, filter: string, params: QueryParams): Promise<ApiKeyRecord[]> {
    const { rows, sideValues: lastUsed } = await selectWithSideValues<StoredKeyFields>(
      what,
      { table: 'api_keys', columns: KEY_COLUMNS, filter, params },
      { table: 'api_key_last_used', key: 'key_id', value: 'last_used_at' },
    );
    return rows.map((row) => toKeyRecord(row, lastUsed.get(row.id) ?? null));
  }

  return {
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
  };
}
