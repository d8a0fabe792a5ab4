import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../core/model/account-records.model.ts';
import { createSqliteAccountStore } from '../../core/ports/account-store/sqlite.adapter.ts';
import { openDatabase } from '../../core/ports/sqlite/open-database.ts';
import { describeAccountStoreContract } from './account-store.contract.ts';

describeAccountStoreContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-control-'));
  return {
    store: createSqliteAccountStore({ file: path.join(dir, 'db', 'control.db') }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('sqlite account store', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kb-control-sqlite-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps keys, audit entries and usage across a reopen of the file', async () => {
    const file = path.join(dir, 'reopen.db');
    const key: ApiKeyRecord = {
      id: 'key-1',
      name: 'ops',
      prefix: 'ink_abcdefgh',
      hash: 'a'.repeat(64),
      workspaceId: 'ws-1',
      permissions: ['read'],
      plan: 'starter',
      createdAt: '2024-01-01T00:00:00.000Z',
      revokedAt: null,
      lastUsedAt: null,
    };
    const first = createSqliteAccountStore({ file });
    await first.createKey(key);
    await first.recordUsage('i-1', [{ keyId: 'key-1', second: 100, count: 2 }]);
    await first.close();

    const second = createSqliteAccountStore({ file });
    expect(await second.getKey('key-1')).toEqual(key);
    expect(await second.readUsage(['key-1'], 0)).toEqual([{ keyId: 'key-1', second: 100, count: 2 }]);
    await second.close();
  });

  it('sees writes of another store on the same file at once', async () => {
    const file = path.join(dir, 'shared.db');
    const a = createSqliteAccountStore({ file });
    const b = createSqliteAccountStore({ file });
    await a.recordUsage('i-a', [{ keyId: 'k', second: 5, count: 1 }]);
    await b.recordUsage('i-b', [{ keyId: 'k', second: 5, count: 4 }]);
    expect(await a.readUsage(['k'], 0)).toEqual([{ keyId: 'k', second: 5, count: 5 }]);
    expect(await a.readUsage(['k'], 0, 'i-a')).toEqual([{ keyId: 'k', second: 5, count: 4 }]);
    await a.close();
    await b.close();
  });

  it('reads accounts stored before generated passwords were marked as not marked, and marks new ones', async () => {
    const file = path.join(dir, 'before-the-mark.db');
    await createSqliteAccountStore({ file }).close();
    // The file as a release before the mark left it: no column, no record of its migration, an account.
    const old = openDatabase(file);
    old.exec(`ALTER TABLE cs_users DROP COLUMN password_generated;
      DELETE FROM schema_migrations WHERE name = 'account-store-003-generated-passwords';
      INSERT INTO cs_users (id, email, password_hash, role, workspace_ids, created_at)
      VALUES ('u-old', 'old@example.com', 'scrypt$old', 'owner', '["default"]', '2024-01-01T00:00:00.000Z');`);
    old.close();

    const store = createSqliteAccountStore({ file });
    expect(await store.getUser('u-old')).toEqual({
      id: 'u-old',
      email: 'old@example.com',
      passwordHash: 'scrypt$old',
      role: 'owner',
      workspaceIds: ['default'],
      createdAt: '2024-01-01T00:00:00.000Z',
      passwordGenerated: false,
    });
    expect(await store.setPassword('u-old', 'scrypt$reset', '2030-01-01T00:00:00.000Z', true)).toBe(true);
    expect((await store.findUserByEmail('old@example.com'))?.passwordGenerated).toBe(true);
    await store.close();
    // Opening it again applies nothing twice and keeps the mark.
    const again = createSqliteAccountStore({ file });
    expect((await again.getUser('u-old'))?.passwordGenerated).toBe(true);
    await again.close();
  });

  it('rejects an audit time filter that is not a timestamp with bad-request', async () => {
    const store = createSqliteAccountStore({ file: path.join(dir, 'filters.db') });
    await expect(store.listAudit({ workspaceId: 'ws', since: 'yesterday', limit: 10 })).rejects.toMatchObject({
      code: 'bad-request',
    });
    await store.close();
  });
});
