import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteIdempotencyStore } from '../../core/ports/idempotency-store/sqlite.adapter.ts';
import { describeIdempotencyStoreContract } from './idempotency-store.contract.ts';

describeIdempotencyStoreContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-idempotency-'));
  const file = path.join(dir, 'idempotency.db');
  const store = createSqliteIdempotencyStore({ file });
  return {
    store,
    openAnother: async () => createSqliteIdempotencyStore({ file }),
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite idempotency store', () => {
  it('keeps claims and answers across a reopen of the file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-idempotency-reopen-'));
    const file = path.join(dir, 'idempotency.db');
    const now = Date.now();
    const first = createSqliteIdempotencyStore({ file });
    const claim = { scope: 'ws/key', fingerprint: 'f', nowMs: now, expiresAtMs: now + 60_000 };
    await first.claim({ ...claim, key: 'answered', token: 'a' });
    await first.claim({ ...claim, key: 'held', token: 'h' });
    const response = { status: 204, headers: {}, body: '' };
    await first.complete('ws/key', 'answered', 'a', response, now + 86_400_000);
    await first.close();
    const second = createSqliteIdempotencyStore({ file });
    expect((await second.lookup('ws/key', 'answered', now))?.response).toEqual(response);
    expect((await second.claim({ ...claim, key: 'held', token: randomUUID() })).claimed).toBe(false);
    await second.close();
    await rm(dir, { recursive: true, force: true });
  });
});
