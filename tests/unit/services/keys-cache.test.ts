/**
 * The key cache in front of the account store (a real SQLite one, shared with a second connection
 * the way a `kb keys revoke` process shares it): revocation is honoured within the cache bound,
 * keys wanted at the same time are read in one query, and busy keys are re-read in the background.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore } from '../../../core/ports/account-store/account-store.port.ts';
import { createSqliteAccountStore } from '../../../core/ports/account-store/sqlite.adapter.ts';
import { createKeysService } from '../../../core/services/keys.service.ts';

let dir: string;
let store: AccountStore;
let other: AccountStore;
/** The hashes of each key read the service made. */
let reads: string[][];
/** The store as the service sees it: every key read recorded. */
let counted: AccountStore;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-keys-cache-'));
  store = createSqliteAccountStore({ file: path.join(dir, 'control.db') });
  other = createSqliteAccountStore({ file: path.join(dir, 'control.db') });
  reads = [];
  counted = Object.create(store, {
    findKeyByHash: {
      value: (hash: string) => {
        reads.push([hash]);
        return store.findKeyByHash(hash);
      },
    },
    findKeysByHash: {
      value: (hashes: readonly string[]) => {
        reads.push([...hashes]);
        return store.findKeysByHash(hashes);
      },
    },
  }) as AccountStore;
});
afterEach(async () => {
  await other.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newKey(cacheMs: number) {
  const keys = createKeysService({ accountStore: counted, cacheMs });
  const create = () => keys.create({ workspaceId: 'w', name: 'k', permissions: ['read'], plan: 'starter' });
  const [first, second] = [await create(), await create()];
  return { keys, key: first.key, id: first.record.id, otherKey: second.key, otherId: second.record.id };
}

describe('API key cache', () => {
  it('stops accepting a key another process revoked within the cache bound', async () => {
    const { keys, key, id } = await newKey(400);
    try {
      expect((await keys.authenticate(key))?.id).toBe(id);
      expect(await other.revokeKey(id, new Date().toISOString())).toBe(true);
      const revokedAt = Date.now();
      let accepted = true;
      while (accepted && Date.now() - revokedAt < 3000) {
        accepted = (await keys.authenticate(key)) !== null;
        await sleep(20);
      }
      expect(accepted).toBe(false);
    } finally {
      await keys.close();
    }
  });

  it('reads the keys many concurrent requests present in one query', async () => {
    const { keys, key, id, otherKey, otherId } = await newKey(5000);
    try {
      const presented = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? key : otherKey));
      const records = await Promise.all(presented.map((k) => keys.authenticate(k)));
      expect(records.map((r) => r?.id)).toEqual(presented.map((k) => (k === key ? id : otherId)));
      expect(reads).toHaveLength(1);
      expect(reads[0]).toHaveLength(2);
    } finally {
      await keys.close();
    }
  });

  it('re-reads the keys in use in the background, and only those', async () => {
    const { keys, key, otherKey } = await newKey(400);
    try {
      await Promise.all([keys.authenticate(key), keys.authenticate(otherKey)]);
      expect(reads).toHaveLength(1);
      // Only `key` stays in use, for three cache windows.
      const until = Date.now() + 1200;
      while (Date.now() < until) {
        expect(await keys.authenticate(key)).not.toBeNull();
        await sleep(25);
      }
      // The first sweep re-reads both (both were used since the first read); later ones only `key`.
      const later = reads.slice(2);
      expect(reads[1]).toHaveLength(2);
      expect(later.length).toBeGreaterThanOrEqual(2);
      expect(later.every((hashes) => hashes.length === 1)).toBe(true);
      expect(new Set(later.flat()).size).toBe(1);
    } finally {
      await keys.close();
    }
  });

  it('writes last uses once a touch interval in one write, and a listing writes them first', async () => {
    const touches: number[] = [];
    const touching = Object.create(counted, {
      touchKeys: {
        value: (lastUsed: ReadonlyMap<string, string>) => {
          touches.push(lastUsed.size);
          return store.touchKeys(lastUsed);
        },
      },
    }) as AccountStore;
    const keys = createKeysService({ accountStore: touching, cacheMs: 1000, touchIntervalMs: 60_000 });
    try {
      const create = () => keys.create({ workspaceId: 'w', name: 'k', permissions: ['read'], plan: 'starter' });
      const [a, b] = [await create(), await create()];
      for (let i = 0; i < 3; i++) {
        expect(await keys.authenticate(a.key)).not.toBeNull();
        expect(await keys.authenticate(b.key)).not.toBeNull();
      }
      // Not written yet: another process does not see the last use.
      expect((await other.getKey(a.record.id))?.lastUsedAt).toBeNull();
      const listed = await keys.list('w');
      expect(listed.map((k) => k.last_used_at === null)).toEqual([false, false]);
      expect(touches).toEqual([2]);
      expect((await other.getKey(b.record.id))?.lastUsedAt).not.toBeNull();
      // Nothing new: the next listing writes nothing.
      await keys.list('w');
      expect(touches).toEqual([2]);
    } finally {
      await keys.close();
    }
  });
});
