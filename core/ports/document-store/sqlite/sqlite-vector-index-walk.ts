import { availableParallelism } from 'node:os';
import type { Graph } from './sqlite-vector-index-file.ts';

/**
 * The index size up to which a query walks the graph with the configured beam; beyond it the beam
 * grows with the logarithm of the size (see {@link queryBeam}).
 */
const BEAM_BASE_SIZE = 100_000;
/**
 * How much wider the beam gets for each doubling of the index beyond {@link BEAM_BASE_SIZE}: at the
 * default 400, 760 at 200k, 1,236 at 500k and 1,596 at a million vectors, where recall@10 of the
 * candidates measured 0.84 at 400, 0.96 at 1,200 and 0.98 at 1,600 (docs/benchmarks.md).
 */
const BEAM_GROWTH = 0.9;
/**
 * Most threads walking the graph for concurrent queries at once, one per core (a walk is
 * single-threaded; two concurrent walks on two threads block the main thread about half as long
 * as two in a row).
 */
const WALK_THREADS = Math.max(1, availableParallelism());

export interface AnnMatches {
  /** Chunk `seq`s, nearest first. */
  readonly seqs: number[];
  /** Whether the index holds more vectors than were returned. */
  readonly more: boolean;
}

/** The graph a walk reads (the vector index's state). */
interface Walked {
  readonly index: Graph;
  readonly dimensions: number;
}

/**
 * The vector index's `search`: the `k` nearest seqs of a vector in the graph `current()` answers.
 * Searches asked for in the same turn of the event loop (concurrent queries) walk the graph
 * together, on up to {@link WALK_THREADS} threads, instead of one after the other on the main
 * thread. No graph (or an empty one): no matches.
 */
export function createGraphWalk(current: () => Walked | null, expansionSearch: number) {
  /** Searches waiting for the next walk. */
  let pending: PendingSearch[] = [];

  function walkPending(): void {
    const batch = pending;
    pending = [];
    try {
      const graph = current();
      const size = graph?.index.size() ?? 0;
      if (graph === null || size === 0) {
        for (const search of batch) search.resolve({ seqs: [], more: false });
        return;
      }
      // usearch walks with a beam of max(expansion_search, wanted): asking for the wider beam's
      // worth of neighbours widens the walk, and the nearest k of them are kept.
      const wanted = Math.min(size, Math.max(...batch.map((s) => s.k), queryBeam(expansionSearch, size)));
      const found = (keys: BigUint64Array, k: number): AnnMatches => {
        const seqs = Array.from(keys.subarray(0, Math.min(k, keys.length)), Number);
        return { seqs, more: size > seqs.length };
      };
      const [first] = batch as [PendingSearch];
      if (batch.length === 1) {
        first.resolve(found(graph.index.search(first.vector, wanted, 1).keys, first.k));
        return;
      }
      const matrix = new Float32Array(batch.length * graph.dimensions);
      batch.forEach((search, i) => {
        matrix.set(search.vector, i * graph.dimensions);
      });
      // A matrix of several vectors answers with a batch of matches (the types take any
      // Float32Array for one vector).
      const matches = graph.index.search(matrix, wanted, Math.min(batch.length, WALK_THREADS)) as unknown as {
        get(i: number): { keys: BigUint64Array };
      };
      batch.forEach((search, i) => {
        search.resolve(found(matches.get(i).keys, search.k));
      });
    } catch (error) {
      for (const search of batch) search.reject(error);
    }
  }

  return (vector: Float32Array, k: number): Promise<AnnMatches> =>
    new Promise((resolve, reject) => {
      pending.push({ vector, k, resolve, reject });
      if (pending.length === 1) setImmediate(walkPending);
    });
}

/** A search waiting for the next walk of the graph. */
interface PendingSearch {
  readonly vector: Float32Array;
  readonly k: number;
  resolve(matches: AnnMatches): void;
  reject(error: unknown): void;
}

/**
 * The beam width of a query on an index of `size` vectors: `expansionSearch` up to
 * {@link BEAM_BASE_SIZE} vectors, then growing with the logarithm of the size, so recall holds as
 * the graph's paths lengthen while the cost of a query stays near-logarithmic.
 */
export function queryBeam(expansionSearch: number, size: number): number {
  if (size <= BEAM_BASE_SIZE) return expansionSearch;
  return Math.round(expansionSearch * (1 + BEAM_GROWTH * Math.log2(size / BEAM_BASE_SIZE)));
}
