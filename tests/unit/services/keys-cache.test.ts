/**
 * The key cache in front of the control store (a real SQLite one, shared with a second connection
 * the way a `kb keys revoke` process shares it): revocation is honoured within the cache bound,
 * concurrent first uses share one lookup, and a busy key is re-read in the background.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlStore } from '../../../pipeline/ports/control-store/control-store.port.ts';
import { createSqliteControlStore } from '../../../pipeline/ports/control-store/sqlite.adapter.ts';
import { createKeysService } from '../../../pipeline/services/keys.service.ts';

let dir: string;
let store: ControlStore;
let other: ControlStore;
let lookups: number;
/** The store as the service sees it: every key lookup counted. */
let counted: ControlStore;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-keys-cache-'));
  store = createSqliteControlStore({ file: path.join(dir, 'control.db') });
  other = createSqliteControlStore({ file: path.join(dir, 'control.db') });
  lookups = 0;
  counted = Object.create(store, {
    findKeyByHash: {
      value: (hash: string) => {
        lookups += 1;
        return store.findKeyByHash(hash);
      },
    },
  }) as ControlStore;
});
afterEach(async () => {
  await other.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newKey(cacheMs: number) {
  const keys = createKeysService({ control: counted, cacheMs });
  const { key, record } = await keys.create({
    workspaceId: 'w',
    name: 'k',
    permissions: ['read'],
    plan: 'starter',
  });
  return { keys, key, id: record.id };
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

  it('looks a key up once for many concurrent first uses', async () => {
    const { keys, key, id } = await newKey(5000);
    try {
      const records = await Promise.all(Array.from({ length: 20 }, () => keys.authenticate(key)));
      expect(records.every((r) => r?.id === id)).toBe(true);
      expect(lookups).toBe(1);
    } finally {
      await keys.close();
    }
  });

  it('re-reads a key used in the second half of its window once, in the background', async () => {
    const { keys, key, id } = await newKey(600);
    try {
      await keys.authenticate(key);
      expect(lookups).toBe(1);
      await sleep(350);
      const records = await Promise.all(Array.from({ length: 10 }, () => keys.authenticate(key)));
      expect(records.every((r) => r?.id === id)).toBe(true);
      expect(lookups).toBe(2);
      // The refreshed record starts a new window: no lookup right after.
      await sleep(50);
      await keys.authenticate(key);
      expect(lookups).toBe(2);
    } finally {
      await keys.close();
    }
  });
});
