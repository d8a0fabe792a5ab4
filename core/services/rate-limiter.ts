import { randomUUID } from 'node:crypto';
import type { ApiKeyRecord, Plan, UsageCount } from '../model/account-records.model.ts';
import type { Logger } from '../model/logger.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { RateDecision, RateLimiter } from './services.ts';

export const PLAN_LIMITS: Readonly<Record<Plan, number>> = {
  starter: 100,
  pro: 500,
  business: 2000,
  enterprise: 10000,
};

const WINDOW_SECONDS = 60;

export interface RateLimiterDeps {
  readonly accountStore: AccountStore;
  /** How often counts are shared with other API instances through the account store. */
  readonly syncIntervalMs: number;
  readonly logger: Logger;
  readonly instanceId?: string;
}

/**
 * Sliding 60-second window per key, counted in one-second buckets. Each API instance counts its
 * own requests and, every sync interval, writes its recent buckets to the account store and
 * reads the other instances' buckets; a decision adds both. Across instances the limit can be
 * overshot by at most one sync interval of traffic. The stored buckets double as per-key usage.
 */
export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const instanceId = deps.instanceId ?? randomUUID();
  const local = new Map<string, Map<number, number>>();
  let remote = new Map<string, Map<number, number>>();
  const dirty = new Set<string>();

  const windowSum = (buckets: Map<number, number> | undefined, since: number) => {
    let sum = 0;
    let oldest = Number.POSITIVE_INFINITY;
    if (!buckets) return { sum, oldest };
    for (const [second, count] of buckets) {
      if (second < since) continue;
      sum += count;
      if (count > 0 && second < oldest) oldest = second;
    }
    return { sum, oldest };
  };

  const prune = (nowSecond: number) => {
    const since = nowSecond - WINDOW_SECONDS;
    for (const [keyId, buckets] of local) {
      for (const second of buckets.keys()) if (second < since - 5) buckets.delete(second);
      if (buckets.size === 0 && !dirty.has(keyId)) local.delete(keyId);
    }
  };

  let syncing: Promise<void> | null = null;
  const sync = async () => {
    const nowSecond = Math.floor(Date.now() / 1000);
    const since = nowSecond - WINDOW_SECONDS;
    const counts: UsageCount[] = [];
    for (const keyId of dirty) {
      for (const [second, count] of local.get(keyId) ?? []) {
        if (second >= since) counts.push({ keyId, second, count });
      }
    }
    dirty.clear();
    if (counts.length > 0) await deps.accountStore.recordUsage(instanceId, counts);
    const keyIds = [...local.keys()];
    if (keyIds.length > 0) {
      const others = await deps.accountStore.readUsage(keyIds, since, instanceId);
      const next = new Map<string, Map<number, number>>();
      for (const u of others) {
        const buckets = next.get(u.keyId) ?? new Map<number, number>();
        buckets.set(u.second, (buckets.get(u.second) ?? 0) + u.count);
        next.set(u.keyId, buckets);
      }
      remote = next;
    }
    prune(nowSecond);
  };
  const timer = setInterval(() => {
    if (syncing) return;
    syncing = sync()
      .catch((error: unknown) => deps.logger.warn({ err: String(error) }, 'rate-limit sync failed'))
      .finally(() => {
        syncing = null;
      });
  }, deps.syncIntervalMs);
  timer.unref();

  return {
    hit(key: ApiKeyRecord, nowMs = Date.now()): RateDecision {
      const limit = PLAN_LIMITS[key.plan] ?? PLAN_LIMITS.starter;
      const nowSecond = Math.floor(nowMs / 1000);
      const since = nowSecond - WINDOW_SECONDS + 1;
      const mine = local.get(key.id) ?? new Map<number, number>();
      local.set(key.id, mine);
      const a = windowSum(mine, since);
      const b = windowSum(remote.get(key.id), since);
      const used = a.sum + b.sum;
      const oldest = Math.min(a.oldest, b.oldest, nowSecond);
      const reset = oldest + WINDOW_SECONDS;
      if (used >= limit) {
        return { allowed: false, limit, remaining: 0, reset, retryAfter: Math.max(1, reset - nowSecond) };
      }
      mine.set(nowSecond, (mine.get(nowSecond) ?? 0) + 1);
      dirty.add(key.id);
      return { allowed: true, limit, remaining: Math.max(0, limit - used - 1), reset, retryAfter: 0 };
    },
    async close() {
      clearInterval(timer);
      if (syncing) await syncing;
      await sync().catch(() => {});
    },
  };
}
