/** `Retry-After` as milliseconds: delta-seconds (fractions accepted) or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/** A server-given wait plus up to 10% more, so that clients told the same instant do not return together. */
export function spreadRetryAfter(retryAfterMs: number, random: () => number = Math.random): number {
  return Math.round(retryAfterMs * (1 + random() * 0.1));
}
