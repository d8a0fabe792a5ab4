import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyRecord, UsageCount } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import type { AccountStore } from '../../../core/ports/account-store/account-store.port.ts';
import { createRateLimiter, PRESENCE_KEY } from '../../../core/services/rate-limiter.ts';
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

/** {@link sharedUsage} that counts the writes (one `recordUsage` call: one insert on ClickHouse). */
function countedUsage() {
  const shared = sharedUsage();
  const counted = {
    writes: 0,
    recordUsage: async (instance: string, counts: readonly UsageCount[]) => {
      counted.writes += 1;
      await shared.recordUsage(instance, counts);
    },
    readUsage: shared.readUsage,
    /** Requests of `keyId` stored over every instance. */
    stored: async (keyId: string) => (await shared.readUsage([keyId], 0)).reduce((sum, u) => sum + u.count, 0),
  };
  return counted;
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
  vi.useRealTimers();
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

  it('counts several requests at once (a batch) only when all of them fit, and says what is left', () => {
    const limiter = soloLimiter();
    const t0 = 1_700_000_000_000;
    expect(limiter.hit(key('starter'), t0, 1)).toMatchObject({ allowed: true, remaining: 99 });
    const refused = limiter.hit(key('starter'), t0, 100);
    expect(refused).toMatchObject({ allowed: false, remaining: 99 });
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
    // The refused batch counted nothing: 99 still fit, then not one more.
    expect(limiter.hit(key('starter'), t0, 99)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.hit(key('starter'), t0).allowed).toBe(false);
    // They leave the window together.
    expect(limiter.hit(key('starter'), t0 + 61_000, 100)).toMatchObject({ allowed: true, remaining: 0 });
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

  describe('an instance that sees no other one writes less often', () => {
    const SYNC_MS = 100;
    const SOLO_MS = 1000;
    const limiter = (accountStore: AccountStore, instanceId: string) => {
      const created = createRateLimiter({
        accountStore,
        syncIntervalMs: SYNC_MS,
        soloSyncIntervalMs: SOLO_MS,
        logger: silentLogger,
        instanceId,
      });
      limiters.push(created);
      return created;
    };

    it('alone, it writes its counts with its presence once a solo interval, and close writes the rest', async () => {
      vi.useFakeTimers({ now: 1_700_000_000_000 });
      const usage = countedUsage();
      const a = limiter(usage as unknown as AccountStore, 'a');
      const k = key('enterprise');
      for (let i = 0; i < 30; i++) {
        expect(a.hit(k, Date.now()).allowed).toBe(true);
        await vi.advanceTimersByTimeAsync(SYNC_MS);
      }
      // 30 syncs over 3 s with new counts each: written at the first, then once a second.
      expect(usage.writes).toBeGreaterThanOrEqual(2);
      expect(usage.writes).toBeLessThanOrEqual(4);
      expect(await usage.stored(PRESENCE_KEY)).toBeGreaterThan(0);
      await a.close();
      expect(await usage.stored(k.id)).toBe(30);
    });

    it('flush writes the held counts at once (a usage read sees them)', async () => {
      vi.useFakeTimers({ now: 1_700_000_000_000 });
      const usage = countedUsage();
      const a = limiter(usage as unknown as AccountStore, 'a');
      const k = key('pro');
      a.hit(k, Date.now());
      await vi.advanceTimersByTimeAsync(SYNC_MS); // the first write: the count and the presence
      for (let i = 0; i < 4; i++) a.hit(k, Date.now());
      await vi.advanceTimersByTimeAsync(SYNC_MS * 2);
      expect(await usage.stored(k.id)).toBe(1);
      await a.flush();
      expect(await usage.stored(k.id)).toBe(5);
    });

    it('a newcomer makes the alone instance write what it held: together they hold one limit', async () => {
      vi.useFakeTimers({ now: 1_700_000_000_000 });
      const usage = countedUsage();
      const store = usage as unknown as AccountStore;
      const a = limiter(store, 'a');
      const k = key('starter');
      let allowed = 0;
      for (let i = 0; i < 30; i++) if (a.hit(k, Date.now()).allowed) allowed++;
      await vi.advanceTimersByTimeAsync(SYNC_MS); // written with a's presence
      for (let i = 0; i < 40; i++) if (a.hit(k, Date.now()).allowed) allowed++;
      await vi.advanceTimersByTimeAsync(SYNC_MS * 3); // alone: these 40 are held
      expect(await usage.stored(k.id)).toBe(30);

      const b = limiter(store, 'b');
      if (b.hit(k, Date.now()).allowed) allowed++;
      // b sees a's presence at its first sync and writes; a sees b's at its next and writes its 40.
      await vi.advanceTimersByTimeAsync(SYNC_MS * 3);
      expect(await usage.stored(k.id)).toBe(71);
      for (let i = 0; i < 60; i++) if (b.hit(k, Date.now()).allowed) allowed++;
      expect(allowed).toBe(100);
      // From now on both write at every sync that has new counts.
      const before = usage.writes;
      a.hit(k, Date.now());
      b.hit(k, Date.now());
      await vi.advanceTimersByTimeAsync(SYNC_MS);
      expect(usage.writes - before).toBe(2);
    });
  });
});
