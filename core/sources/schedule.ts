import { parse } from 'tinyduration';

/** The shortest schedule allowed. */
const MIN_MS = 1000;

/**
 * The interval of an ISO 8601 duration schedule (`PT15M`, `P1D`, `P1W`) in ms, or null when it is
 * not one this service runs: malformed, with years or months (of no fixed length), negative, or
 * shorter than a second.
 */
export function scheduleMs(schedule: string): number | null {
  let d: ReturnType<typeof parse>;
  try {
    d = parse(schedule);
  } catch {
    return null;
  }
  if (d.negative || d.years || d.months) return null;
  const ms =
    (d.weeks ?? 0) * 604_800_000 +
    (d.days ?? 0) * 86_400_000 +
    (d.hours ?? 0) * 3_600_000 +
    (d.minutes ?? 0) * 60_000 +
    (d.seconds ?? 0) * 1000;
  return Number.isFinite(ms) && ms >= MIN_MS ? Math.round(ms) : null;
}
