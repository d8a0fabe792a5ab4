/** Order statistics over measurements taken in one run. */

export interface Summary {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** The q-quantile (0..1) by linear interpolation between closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (at - low);
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN };
  return { min: Math.min(...values), median: quantile(values, 0.5), max: Math.max(...values) };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Latency percentiles of one load run, in milliseconds. */
export interface Latencies {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly count: number;
}

export function latencies(samples: readonly number[]): Latencies {
  return {
    p50: quantile(samples, 0.5),
    p95: quantile(samples, 0.95),
    p99: quantile(samples, 0.99),
    count: samples.length,
  };
}

/** Runs `task` over `items` with `concurrency` workers; returns each call's duration in ms. */
export async function timedPool<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<{ durations: number[]; wallMs: number }> {
  const durations: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      const t = performance.now();
      await task(item);
      durations.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return { durations, wallMs: performance.now() - started };
}
