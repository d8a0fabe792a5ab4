/**
 * Wrong passwords counted per email, in this process: after `maxFailures` in a row the email is
 * locked for `lockoutMs`. The table holds at most `maxTracked` emails; above it the oldest entries
 * that lock nothing are forgotten first, then the oldest locks, so a flood of new emails cannot
 * reset every lockout at once.
 */
export interface SignInFailures {
  /** Seconds the email stays locked, 0 when it is not. */
  lockedFor(email: string): number;
  /** Counts one wrong password for `email`. */
  record(email: string): void;
  /** Forgets the count of `email` (after a right password). */
  clear(email: string): void;
  /** Emails tracked now. */
  size(): number;
}

export interface SignInFailuresOptions {
  readonly maxFailures: number;
  readonly lockoutMs: number;
  readonly maxTracked: number;
  readonly now: () => number;
}

interface Entry {
  count: number;
  lockedUntil: number;
}

export function createSignInFailures(options: SignInFailuresOptions): SignInFailures {
  const { maxFailures, lockoutMs, maxTracked, now } = options;
  // Insertion order is recency: an email is moved to the end each time it fails.
  const entries = new Map<string, Entry>();

  /** Forgets entries down to nine tenths of the room, never `current` (the email failing now). */
  const evict = (current: string) => {
    if (entries.size <= maxTracked) return;
    // A tenth of the room at once, so that eviction is not paid on every failure.
    const keep = Math.max(1, Math.floor(maxTracked * 0.9));
    const t = now();
    for (const [email, entry] of entries) {
      if (entries.size <= keep) return;
      if (email !== current && entry.lockedUntil <= t) entries.delete(email);
    }
    for (const email of entries.keys()) {
      if (entries.size <= keep) return;
      if (email !== current) entries.delete(email);
    }
  };

  return {
    lockedFor(email) {
      const entry = entries.get(email);
      const t = now();
      if (!entry || entry.lockedUntil <= t) return 0;
      return Math.ceil((entry.lockedUntil - t) / 1000);
    },

    record(email) {
      const t = now();
      const entry = entries.get(email) ?? { count: 0, lockedUntil: 0 };
      if (entry.lockedUntil !== 0 && entry.lockedUntil <= t) {
        entry.count = 0;
        entry.lockedUntil = 0;
      }
      entry.count += 1;
      if (entry.count >= maxFailures) entry.lockedUntil = t + lockoutMs;
      entries.delete(email);
      entries.set(email, entry);
      evict(email);
    },

    clear(email) {
      entries.delete(email);
    },

    size() {
      return entries.size;
    },
  };
}
