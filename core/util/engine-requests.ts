/**
 * Requests this process sent to each engine, counted by the adapters where they send them: one
 * count per request on the wire (a `_bulk` of 500 actions is one OpenSearch request, a Kafka
 * produce carrying ten records is one produce request). Read by `/metrics`
 * (`kb_engine_requests_total{engine,operation}`) and by the bench, which divides the growth over a
 * run by the documents it ingested.
 *
 * The counts are process-wide (every adapter instance of the process adds to them), monotonic, and
 * kept in memory only; they start at zero with the process.
 */
export type Engine = 'opensearch' | 'kafka' | 'minio' | 'clickhouse' | 'schema-registry';

const counts = new Map<string, number>();

function keyOf(engine: Engine, operation: string): string {
  return `${engine}\u0000${operation}`;
}

/** Counts `n` requests of `operation` (e.g. `_mget`, `Produce`, `insert`) sent to `engine`. */
export function countEngineRequest(engine: Engine, operation: string, n = 1): void {
  const key = keyOf(engine, operation);
  counts.set(key, (counts.get(key) ?? 0) + n);
}

export interface EngineRequestCount {
  readonly engine: Engine;
  readonly operation: string;
  readonly count: number;
}

/** Every count so far, by engine and operation. */
export function engineRequestCounts(): EngineRequestCount[] {
  return [...counts].map(([key, count]) => {
    const [engine, operation] = key.split('\u0000') as [Engine, string];
    return { engine, operation, count };
  });
}

/** What `after` added to `before` (two reads of {@link engineRequestCounts}), by engine and operation. */
export function engineRequestGrowth(
  before: readonly EngineRequestCount[],
  after: readonly EngineRequestCount[],
): EngineRequestCount[] {
  const start = new Map(before.map((c) => [keyOf(c.engine, c.operation), c.count]));
  return after
    .map((c) => ({ ...c, count: c.count - (start.get(keyOf(c.engine, c.operation)) ?? 0) }))
    .filter((c) => c.count > 0);
}
