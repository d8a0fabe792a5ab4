/** A small seeded pseudo-random generator (mulberry32) with the helpers the corpus needs. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** Log-normal with the given median and spread (sigma of the underlying normal), clamped. */
  logNormal(median: number, sigma: number, min: number, max: number): number;
  chance(p: number): boolean;
}

export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => {
    const u = Math.max(next(), Number.EPSILON);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
    normal,
    logNormal: (median, sigma, min, max) =>
      Math.round(Math.min(max, Math.max(min, median * Math.exp(sigma * normal())))),
    chance: (p) => next() < p,
  };
}

/** A seed derived from a label, so independent streams (documents, queries, vectors) do not overlap. */
export function seedFrom(label: string, base: number): number {
  let h = 2166136261 ^ base;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619);
  return h >>> 0;
}
