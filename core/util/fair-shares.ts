/**
 * Fair turns among the shares (tenants) of the messages waiting on one partition: the next
 * message started belongs to the share whose handlers have taken the least time so far. A share
 * that was not waiting at the previous pick starts level with the least-served share that was
 * (never below its own past), so an idle share neither loses its turn nor, on its return, keeps
 * the others out while it spends credit saved up long ago. One instance per queue: the message-log
 * adapters keep one per partition (`SubscribeOptions.shareOf`), the parse pool one for its threads.
 */
export interface FairShares {
  /** The candidate to start next (candidates in offset order; the earliest wins a tie). */
  pick<T>(candidates: readonly T[], shareOf: (candidate: T) => string): T | undefined;
  /** Records `ms` of handler time spent for `share`. */
  charge(share: string, ms: number): void;
}

/** Shares whose credit is remembered; beyond it, those not waiting are forgotten. */
const REMEMBERED = 10_000;

export function createFairShares(): FairShares {
  const credit = new Map<string, number>();
  let waiting = new Set<string>();
  return {
    pick(candidates, shareOf) {
      const shares = new Set(candidates.map(shareOf));
      let level = Number.POSITIVE_INFINITY;
      for (const share of shares) if (waiting.has(share)) level = Math.min(level, credit.get(share) ?? 0);
      if (level !== Number.POSITIVE_INFINITY) {
        for (const share of shares) {
          if (!waiting.has(share)) credit.set(share, Math.max(credit.get(share) ?? 0, level));
        }
      }
      waiting = shares;
      if (candidates.length === 0) return undefined;
      if (credit.size > REMEMBERED) for (const share of credit.keys()) if (!shares.has(share)) credit.delete(share);
      let best = candidates[0] as (typeof candidates)[number];
      let least = credit.get(shareOf(best)) ?? 0;
      for (const candidate of candidates) {
        const c = credit.get(shareOf(candidate)) ?? 0;
        if (c < least) {
          best = candidate;
          least = c;
        }
      }
      return best;
    },
    charge(share, ms) {
      credit.set(share, (credit.get(share) ?? 0) + ms);
    },
  };
}
