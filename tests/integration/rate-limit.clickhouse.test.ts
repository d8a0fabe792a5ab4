import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../core/model/account-records.model.ts';
import { silentLogger } from '../../core/model/logger.model.ts';
import type { AccountStore } from '../../core/ports/account-store/account-store.port.ts';
import { createClickHouseAccountStore } from '../../core/ports/account-store/clickhouse.adapter.ts';
import { createRateLimiter, PLAN_LIMITS } from '../../core/services/rate-limiter.ts';
import type { RateLimiter } from '../../core/services/services.ts';
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

  it('two instances share one starter limit: together they allow about 100 requests, not 200', async () => {
    const a = createRateLimiter({
      accountStore: store,
      syncIntervalMs: SYNC_INTERVAL_MS,
      logger: silentLogger,
      instanceId: `api-a-${randomUUID()}`,
    });
    const b = createRateLimiter({
      accountStore: store,
      syncIntervalMs: SYNC_INTERVAL_MS,
      logger: silentLogger,
      instanceId: `api-b-${randomUUID()}`,
    });
    limiters.push(a, b);
    const key: ApiKeyRecord = {
      id: randomUUID(),
      name: 'shared',
      prefix: 'ink_abcdefgh',
      hash: randomUUID().replaceAll('-', '').repeat(2),
      workspaceId: `ws-${randomUUID()}`,
      permissions: ['read'],
      plan: 'starter',
      createdAt: new Date().toISOString(),
      revokedAt: null,
      lastUsedAt: null,
    };
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
  });
});
