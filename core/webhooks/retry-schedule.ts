/**
 * Delays before the retries of a failed delivery, as multiples of the base delay: with the
 * default base of 5 s they are 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about a day in all).
 */
export const RETRY_MULTIPLIERS = [1, 60, 360, 1440, 3600, 7200, 7200] as const;

/** Jitter: each delay is spread uniformly over ±20 % so that failed deliveries do not retry in step. */
const JITTER = 0.2;

/**
 * The delay before the next attempt after `attempts` failed ones (1 after the first), or null
 * when the schedule is spent and the delivery is given up.
 */
export function retryDelayMs(attempts: number, baseMs: number, random: () => number = Math.random): number | null {
  const multiplier = RETRY_MULTIPLIERS[attempts - 1];
  if (multiplier === undefined) return null;
  const delay = baseMs * multiplier;
  return Math.max(1, Math.round(delay * (1 - JITTER + 2 * JITTER * random())));
}
