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
  /**
   * How often counts are written while no other instance is seen counting requests; longer than
   * `syncIntervalMs` to save writes when one process serves alone. Absent or not longer than
   * `syncIntervalMs`: counts are written every sync, and no presence is recorded.
   */
  readonly soloSyncIntervalMs?: number;
  readonly logger: Logger;
  readonly instanceId?: string;
}

/** A {@link RateLimiter} that can also write the counts it holds now (before a usage read). */
export interface SharedRateLimiter extends RateLimiter {
  /** Writes this instance's counts not yet written, at once. */
  flush(): Promise<void>;
}

/**
 * The key id of the rows by which an instance that counts requests tells the others it exists
 * (one row, count 1, at the second of each write). Never a key's id: those are UUIDs.
 */
export const PRESENCE_KEY = '~instance';

/**
 * Sliding 60-second window per key, counted in one-second buckets. Each API instance counts its
 * own requests and, every sync interval, reads the other instances' buckets and writes its recent
 * buckets to the account store; a decision adds both. Across instances the limit can be overshot
 * by at most one sync interval of traffic. The stored buckets double as per-key usage.
 *
 * With `soloSyncIntervalMs` longer than the sync interval, an instance that sees no other one
 * writes only that often, its counts and a presence row ({@link PRESENCE_KEY}) in one write. An
 * instance that counts a request reads the others' presence at its next sync: when it sees one
 * (written within two solo intervals) it writes at every sync, and so does the other once it sees
 * the newcomer's presence, with every count it held. So a newcomer may miss an alone instance's
 * held counts for about two sync intervals after its first request (the overshoot stays within
 * about two sync intervals of its traffic); from then on the bound above holds. An instance writes
 * nothing (no presence either) while it counts no request, and `flush` and `close` write what it
 * holds, so a usage read of this instance and a SIGTERM lose nothing. A stopped instance's
 * presence still counts for two solo intervals (the others write every sync meanwhile).
 */
export function createRateLimiter(deps: RateLimiterDeps): SharedRateLimiter {
  const instanceId = deps.instanceId ?? randomUUID();
  const soloMs = Math.max(deps.soloSyncIntervalMs ?? 0, deps.syncIntervalMs);
  const announces = soloMs > deps.syncIntervalMs;
  /** Presence rows newer than this many seconds mean another instance counts requests. */
  const presenceSeconds = Math.ceil((2 * soloMs) / 1000) + 1;
  const local = new Map<string, Map<number, number>>();
  let remote = new Map<string, Map<number, number>>();
  /** Keys whose counts changed since they were last written. */
  const dirty = new Set<string>();
  /** Whether the last read saw another instance's presence; when the last write was (ms). */
  let peers = false;
  let writtenAt = 0;

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

  /** Reads the other instances' buckets of the keys in use (and their presence). */
  const readOthers = async (nowSecond: number) => {
    const keyIds = [...local.keys()];
    if (keyIds.length === 0) return;
    const since = nowSecond - Math.max(WINDOW_SECONDS, presenceSeconds);
    const others = await deps.accountStore.readUsage(announces ? [...keyIds, PRESENCE_KEY] : keyIds, since, instanceId);
    const next = new Map<string, Map<number, number>>();
    let seen = false;
    for (const u of others) {
      if (u.keyId === PRESENCE_KEY) {
        if (u.second >= nowSecond - presenceSeconds) seen = true;
        continue;
      }
      const buckets = next.get(u.keyId) ?? new Map<number, number>();
      buckets.set(u.second, (buckets.get(u.second) ?? 0) + u.count);
      next.set(u.keyId, buckets);
    }
    remote = next;
    peers = seen;
  };

  /** Writes the held counts (and the presence row) when due, or whatever is held with `force`. */
  const writeOwn = async (nowMs: number, force: boolean) => {
    const nowSecond = Math.floor(nowMs / 1000);
    const active = local.size > 0;
    const due = force || !announces || peers || nowMs - writtenAt >= soloMs;
    const presenceDue = announces && active && nowMs - writtenAt >= soloMs;
    if (!(due && dirty.size > 0) && !presenceDue) return;
    const since = nowSecond - WINDOW_SECONDS;
    const keys = [...dirty];
    const counts: UsageCount[] = [];
    for (const keyId of keys) {
      for (const [second, count] of local.get(keyId) ?? []) {
        if (second >= since) counts.push({ keyId, second, count });
      }
    }
    if (announces && active) counts.push({ keyId: PRESENCE_KEY, second: nowSecond, count: 1 });
    dirty.clear();
    try {
      if (counts.length > 0) await deps.accountStore.recordUsage(instanceId, counts);
      writtenAt = nowMs;
    } catch (error) {
      for (const keyId of keys) dirty.add(keyId);
      throw error;
    }
  };

  /** A sync: reads (which tells whether others count too), then writes what is due; `force` only writes. */
  const sync = async (force: boolean) => {
    const nowSecond = Math.floor(Date.now() / 1000);
    // A failed read still lets the counts be written (as due without news of the others).
    const read = force
      ? null
      : await readOthers(nowSecond).then(
          () => null,
          (error: unknown) => ({ error }),
        );
    await writeOwn(Date.now(), force);
    if (!force) prune(nowSecond);
    if (read) throw read.error;
  };

  /** Syncs run one after another: the timer's, `flush`'s and `close`'s. */
  let chain: Promise<void> = Promise.resolve();
  const serially = (force: boolean): Promise<void> => {
    const run = chain.then(() => sync(force));
    chain = run.catch(() => undefined);
    return run;
  };
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return;
    ticking = true;
    serially(false)
      .catch((error: unknown) => deps.logger.warn({ err: String(error) }, 'rate-limit sync failed'))
      .finally(() => {
        ticking = false;
      });
  }, deps.syncIntervalMs);
  timer.unref();

  return {
    hit(key: ApiKeyRecord, nowMs = Date.now(), requests = 1): RateDecision {
      const limit = PLAN_LIMITS[key.plan] ?? PLAN_LIMITS.starter;
      const count = Math.max(1, Math.floor(requests));
      const nowSecond = Math.floor(nowMs / 1000);
      const since = nowSecond - WINDOW_SECONDS + 1;
      const mine = local.get(key.id) ?? new Map<number, number>();
      local.set(key.id, mine);
      const a = windowSum(mine, since);
      const b = windowSum(remote.get(key.id), since);
      const used = a.sum + b.sum;
      const oldest = Math.min(a.oldest, b.oldest, nowSecond);
      const reset = oldest + WINDOW_SECONDS;
      if (used + count > limit) {
        const remaining = Math.max(0, limit - used);
        return { allowed: false, limit, remaining, reset, retryAfter: Math.max(1, reset - nowSecond) };
      }
      mine.set(nowSecond, (mine.get(nowSecond) ?? 0) + count);
      dirty.add(key.id);
      return { allowed: true, limit, remaining: Math.max(0, limit - used - count), reset, retryAfter: 0 };
    },
    flush: () => serially(true),
    async close() {
      clearInterval(timer);
      await serially(true).catch((error: unknown) =>
        deps.logger.warn({ err: String(error) }, 'rate-limit counts could not be written on close'),
      );
    },
  };
}
