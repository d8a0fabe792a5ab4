import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../core/model/account-records.model.ts';
import { silentLogger } from '../../core/model/logger.model.ts';
import type { AccountStore } from '../../core/ports/account-store/account-store.port.ts';
import { createClickHouseAccountStore } from '../../core/ports/account-store/clickhouse.adapter.ts';
import { createRateLimiter, PLAN_LIMITS } from '../../core/services/rate-limiter.ts';
import type { RateLimiter } from '../../core/services/services.ts';
import { engineRequestCounts } from '../../core/util/engine-requests.ts';
import { clickhouseTestOptions, dropClickHouseDatabase } from '../support/clickhouse-test-db.ts';

const SYNC_INTERVAL_MS = 200;
const HITS_PER_INSTANCE = 100;
const HIT_SPACING_MS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('rate limit across API instances through ClickHouse', () => {
  const options = clickhouseTestOptions();
  let store: AccountStore;
  const limiters: RateLimiter[] = [];

  beforeAll(async () => {
    store = await createClickHouseAccountStore(options);
  });

  afterAll(async () => {
    await Promise.all(limiters.map((limiter) => limiter.close()));
    await store?.close();
    await dropClickHouseDatabase(options);
  });

  const newKey = (plan: ApiKeyRecord['plan']): ApiKeyRecord => ({
    id: randomUUID(),
    name: 'shared',
    prefix: 'ink_abcdefgh',
    hash: randomUUID().replaceAll('-', '').repeat(2),
    workspaceId: `ws-${randomUUID()}`,
    permissions: ['read'],
    plan,
    createdAt: new Date().toISOString(),
    revokedAt: null,
    lastUsedAt: null,
  });
  const inserts = () =>
    engineRequestCounts()
      .filter((c) => c.engine === 'clickhouse' && c.operation === 'insert')
      .reduce((sum, c) => sum + c.count, 0);

  it.each([
    { writes: 'every sync', solo: undefined },
    { writes: 'every 2 s while alone', solo: 2_000 },
  ])(
    'two instances share one starter limit (writing $writes): together they allow about 100 requests, not 200',
    async ({ solo }) => {
      const limiter = (name: string) =>
        createRateLimiter({
          accountStore: store,
          syncIntervalMs: SYNC_INTERVAL_MS,
          ...(solo === undefined ? {} : { soloSyncIntervalMs: solo }),
          logger: silentLogger,
          instanceId: `api-${name}-${randomUUID()}`,
        });
      const a = limiter('a');
      const b = limiter('b');
      limiters.push(a, b);
      const key = newKey('starter');
      const limit = PLAN_LIMITS.starter;
      expect(limit).toBe(100);

      const allowed = { a: 0, b: 0 };
      // 2 × 100 requests, alternating between the instances, over about two seconds.
      for (let i = 0; i < 2 * HITS_PER_INSTANCE; i++) {
        const instance = i % 2 === 0 ? 'a' : 'b';
        if ((instance === 'a' ? a : b).hit(key).allowed) allowed[instance] += 1;
        await sleep(HIT_SPACING_MS);
      }
      const total = allowed.a + allowed.b;
      // Each instance alone saw only 100 requests and would have allowed them all. Sharing counts
      // every sync interval bounds the overshoot by about one interval of traffic: 100 requests a
      // second × 200 ms = 20, plus room for the time a sync takes.
      expect(total).toBeGreaterThanOrEqual(limit);
      expect(total).toBeLessThanOrEqual(limit + 30);
      expect(allowed.a).toBeLessThan(HITS_PER_INSTANCE);
      expect(allowed.b).toBeLessThan(HITS_PER_INSTANCE);

      // The counts both instances shared are in ClickHouse too: per-key usage over the window.
      await a.close();
      await b.close();
      const usage = await store.readUsage([key.id], Math.floor(Date.now() / 1000) - 120);
      expect(usage.reduce((sum, u) => sum + u.count, 0)).toBe(total);
    },
  );

  it('an instance alone writes its counts once per solo interval, and close writes the rest', async () => {
    // A database of its own: the instances above left their presence, which is seen for two solo intervals.
    const ownOptions = clickhouseTestOptions();
    const own = await createClickHouseAccountStore(ownOptions);
    try {
      await aloneOn(own);
    } finally {
      await own.close();
      await dropClickHouseDatabase(ownOptions);
    }
  });

  async function aloneOn(store: AccountStore): Promise<void> {
    const alone = createRateLimiter({
      accountStore: store,
      syncIntervalMs: 100,
      soloSyncIntervalMs: 2_000,
      logger: silentLogger,
      instanceId: `api-alone-${randomUUID()}`,
    });
    limiters.push(alone);
    const key = newKey('enterprise');
    const before = inserts();
    let hits = 0;
    // About 3 s of steady traffic: 30 syncs with new counts.
    for (const started = Date.now(); Date.now() - started < 3_000; hits++) {
      expect(alone.hit(key).allowed).toBe(true);
      await sleep(HIT_SPACING_MS * 5);
    }
    // Written at the first sync, then once per 2 s (every sync would be about 30 inserts).
    expect(inserts() - before).toBeGreaterThanOrEqual(1);
    expect(inserts() - before).toBeLessThanOrEqual(3);
    await alone.close();
    const usage = await store.readUsage([key.id], Math.floor(Date.now() / 1000) - 120);
    expect(usage.reduce((sum, u) => sum + u.count, 0)).toBe(hits);
  }
});
