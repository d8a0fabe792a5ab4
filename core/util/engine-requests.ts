import { AsyncLocalStorage } from 'node:async_hooks';

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
/** Requests sent inside {@link countedApart}, kept out of {@link counts}. */
const apart = new Map<string, number>();
const apartScope = new AsyncLocalStorage<true>();
/** Requests counted in {@link counts} again by the label of the {@link countedUnder} scope that sent them. */
const labelled = new Map<string, number>();
const labelScope = new AsyncLocalStorage<string>();

/**
 * Runs `body` with the requests it sends (and the asynchronous work it starts) counted apart: in
 * {@link engineRequestsCountedApart}, not in {@link engineRequestCounts} nor `/metrics`. For an
 * observer that must not count as the work it observes, as the bench's polls for completion while
 * it measures the pipeline's requests per document. A request another caller shares with it (a
 * lookup it joins, a refresh already under way) counts where it was started.
 */
export function countedApart<T>(body: () => Promise<T>): Promise<T> {
  return apartScope.run(true, body);
}

/**
 * Runs `body` with the requests it sends counted as usual and also under `label` (the pipeline's
 * stage, say), in {@link engineRequestCountsByLabel}: where a process's requests come from. A request
 * shared by several callers (a coalesced lookup or write) counts under the label of the caller that
 * started it.
 */
export function countedUnder<T>(label: string, body: () => Promise<T>): Promise<T> {
  return labelScope.run(label, body);
}

function keyOf(engine: Engine, operation: string): string {
  return `${engine}\u0000${operation}`;
}

/** Counts `n` requests of `operation` (e.g. `_mget`, `Produce`, `insert`) sent to `engine`. */
export function countEngineRequest(engine: Engine, operation: string, n = 1): void {
  const key = keyOf(engine, operation);
  const isApart = apartScope.getStore() === true;
  const into = isApart ? apart : counts;
  into.set(key, (into.get(key) ?? 0) + n);
  const label = labelScope.getStore();
  if (label !== undefined && !isApart) {
    const labelKey = `${label}\u0000${key}`;
    labelled.set(labelKey, (labelled.get(labelKey) ?? 0) + n);
  }
}

/** Every count sent inside {@link countedUnder} so far, by label, engine and operation. */
export function engineRequestCountsByLabel(): Array<EngineRequestCount & { readonly label: string }> {
  return [...labelled].map(([key, count]) => {
    const [label, engine, operation] = key.split('\u0000') as [string, Engine, string];
    return { label, engine, operation, count };
  });
}

export interface EngineRequestCount {
  readonly engine: Engine;
  readonly operation: string;
  readonly count: number;
}

/** Every count so far, by engine and operation. */
export function engineRequestCounts(): EngineRequestCount[] {
  return listed(counts);
}

/** Every count of requests sent inside {@link countedApart} so far, by engine and operation. */
export function engineRequestsCountedApart(): EngineRequestCount[] {
  return listed(apart);
}

function listed(from: ReadonlyMap<string, number>): EngineRequestCount[] {
  return [...from].map(([key, count]) => {
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
