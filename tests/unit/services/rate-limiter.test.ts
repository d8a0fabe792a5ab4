import { afterEach, describe, expect, it } from 'vitest';
import type { ApiKeyRecord, UsageCount } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import type { AccountStore } from '../../../core/ports/account-store/account-store.port.ts';
import { createRateLimiter } from '../../../core/services/rate-limiter.ts';
import type { RateLimiter } from '../../../core/services/services.ts';

const key = (plan: ApiKeyRecord['plan'], id = 'k1'): ApiKeyRecord => ({
  id,
  name: 'test',
  prefix: 'ink_aaaaaaaa',
  hash: 'h',
  workspaceId: 'w',
  permissions: ['read'],
  plan,
  createdAt: new Date().toISOString(),
  revokedAt: null,
  lastUsedAt: null,
});

/** Usage shared between limiter instances the way the account store shares it between API processes. */
function sharedUsage(): Pick<AccountStore, 'recordUsage' | 'readUsage'> {
  const rows = new Map<string, UsageCount & { instance: string }>();
  return {
    async recordUsage(instance, counts) {
      for (const c of counts) rows.set(`${instance}|${c.keyId}|${c.second}`, { ...c, instance });
    },
    async readUsage(keyIds, since, exclude) {
      return [...rows.values()].filter((r) => keyIds.includes(r.keyId) && r.second >= since && r.instance !== exclude);
    },
  };
}

const limiters: RateLimiter[] = [];

/** A limiter alone on its usage store (syncing every second), closed after the test. */
function soloLimiter(): RateLimiter {
  const limiter = createRateLimiter({
    accountStore: sharedUsage() as AccountStore,
    syncIntervalMs: 1000,
    logger: silentLogger,
  });
  limiters.push(limiter);
  return limiter;
}
afterEach(async () => {
  await Promise.all(limiters.splice(0).map((l) => l.close()));
});

describe('rate limiter', () => {
  it('allows the plan limit within 60 s, then refuses with Retry-After until the window slides', () => {
    const limiter = soloLimiter();
    const t0 = 1_700_000_000_000;
    const decisions = Array.from({ length: 101 }, (_, i) => limiter.hit(key('starter'), t0 + i * 100));
    expect(decisions.slice(0, 100).every((d) => d.allowed)).toBe(true);
    expect(decisions[0]).toMatchObject({ limit: 100, remaining: 99, reset: Math.floor(t0 / 1000) + 60 });
    expect(decisions[99]?.remaining).toBe(0);
    const refused = decisions[100];
    expect(refused?.allowed).toBe(false);
    expect(refused?.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused?.retryAfter).toBeLessThanOrEqual(60);
    // 61 s later the first second's requests have left the window.
    expect(limiter.hit(key('starter'), t0 + 61_000).allowed).toBe(true);
  });

  it('limits keys independently and by plan', () => {
    const limiter = soloLimiter();
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 100; i++) limiter.hit(key('starter', 'a'), t0);
    expect(limiter.hit(key('starter', 'a'), t0).allowed).toBe(false);
    expect(limiter.hit(key('pro', 'b'), t0)).toMatchObject({ allowed: true, limit: 500, remaining: 499 });
  });

  it('two instances sharing usage through the account store hold one limit together', async () => {
    const accountStore = sharedUsage() as AccountStore;
    const a = createRateLimiter({ accountStore, syncIntervalMs: 50, logger: silentLogger, instanceId: 'a' });
    const b = createRateLimiter({ accountStore, syncIntervalMs: 50, logger: silentLogger, instanceId: 'b' });
    limiters.push(a, b);
    const k = key('starter');
    let allowed = 0;
    for (let i = 0; i < 80; i++) if (a.hit(k).allowed) allowed++;
    b.hit(k); // b learns of the key, so its sync reads the key's usage
    allowed++;
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 80; i++) if (b.hit(k).allowed) allowed++;
    expect(allowed).toBe(100);
  });
});
