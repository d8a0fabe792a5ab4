import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import usearch from 'usearch';
import { bytesToVector } from '../stored-records.ts';

/**
 * The HNSW graph of the vector index and its files beside the database, shared by the index
 * (`sqlite-vector-index.ts`) and the worker thread that builds a large one in the background
 * (`sqlite-vector-index-build.worker.ts`), so both build and save it the same way.
 */

/** HNSW graph degree and build-time beam width: usearch's recommended values for 384-d text vectors. */
export const CONNECTIVITY = 16;
const EXPANSION_ADD = 128;
/** Rows added to the graph per step of a build. */
const BUILD_BATCH = 2048;

/**
 * How the graph stores its vectors: `i8` (one byte per dimension, a quarter of `f32`), `f16` (half)
 * or `f32`. Distances inside the graph use the stored form; the store scores the candidates it
 * returns with the full-precision vectors in SQLite.
 */
export type VectorQuantization = 'i8' | 'f16' | 'f32';

/** The usearch scalar kind of each quantization. */
export const SCALAR_KIND = {
  i8: usearch.ScalarKind.I8,
  f16: usearch.ScalarKind.F16,
  f32: usearch.ScalarKind.F32,
} as const satisfies Record<VectorQuantization, unknown>;

export type Graph = InstanceType<typeof usearch.Index>;

export interface GraphSettings {
  readonly dimensions: number;
  readonly quantization: VectorQuantization;
  /** Beam width of a query (usearch's `expansion_search`). */
  readonly expansionSearch: number;
}

export function newGraph(settings: GraphSettings): Graph {
  return new usearch.Index({
    dimensions: settings.dimensions,
    metric: usearch.MetricKind.Cos,
    quantization: SCALAR_KIND[settings.quantization],
    multi: false,
    connectivity: CONNECTIVITY,
    expansion_add: EXPANSION_ADD,
    expansion_search: settings.expansionSearch,
  });
}

/**
 * Adds the rows (chunk `seq` and stored vector bytes) to the graph in batches, each spread over
 * `threads` threads (0: usearch's default, every core).
 */
export function addRows(
  graph: Graph,
  rows: Iterable<{ seq: number; vector: Uint8Array }>,
  dimensions: number,
  threads: number,
): void {
  let keys: number[] = [];
  let flat = new Float32Array(BUILD_BATCH * dimensions);
  const flush = () => {
    if (keys.length === 0) return;
    graph.add(BigUint64Array.from(keys, BigInt), flat.subarray(0, keys.length * dimensions), threads);
    keys = [];
    flat = new Float32Array(BUILD_BATCH * dimensions);
  };
  for (const row of rows) {
    flat.set(bytesToVector(row.vector), keys.length * dimensions);
    keys.push(row.seq);
    if (keys.length === BUILD_BATCH) flush();
  }
  flush();
}

/** What the JSON file beside a saved index (`<database>.vectors.json`) records about it. */
export interface SavedIndex {
  readonly model: string;
  readonly dimensions: number;
  readonly quantization: VectorQuantization;
  readonly connectivity: number;
  /** The change-log position the saved graph holds every change up to. */
  readonly cursor: number;
  /** The `*.usearch` file's name, in the same directory. */
  readonly file: string;
  readonly sha256: string;
}

/**
 * Saves the graph beside the database: a `*.usearch` file named by a random token, then the JSON
 * file naming it with its sha256 and the graph's settings (written to a temporary name and
 * renamed); older index files are removed.
 */
export function saveGraph(
  graph: Graph,
  metaFile: string,
  fields: Pick<SavedIndex, 'model' | 'dimensions' | 'quantization' | 'cursor'>,
): void {
  const dir = path.dirname(metaFile);
  const file = `${path.basename(metaFile, '.json')}.${randomBytes(6).toString('hex')}.usearch`;
  graph.save(path.join(dir, file));
  const saved: SavedIndex = { ...fields, connectivity: CONNECTIVITY, file, sha256: digest(path.join(dir, file)) };
  const tmp = `${metaFile}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(saved));
  renameSync(tmp, metaFile);
  removeStrayFiles(metaFile);
}

/** The saved index's metadata as written (unchecked); throws when there is none or it is not JSON. */
export function readSavedIndex(metaFile: string): Partial<SavedIndex> {
  return JSON.parse(readFileSync(metaFile, 'utf8')) as Partial<SavedIndex>;
}

/**
 * Removes the index files the metadata does not name (older graphs, a graph whose build was
 * stopped before it was named) and temporary files left by an interrupted save.
 */
export function removeStrayFiles(metaFile: string): void {
  const dir = path.dirname(metaFile);
  const base = path.basename(metaFile, '.json');
  let named: unknown = null;
  try {
    named = readSavedIndex(metaFile).file;
  } catch {
    // No metadata: no index file is usable.
  }
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${base}.`) || name === named) continue;
    if (name.endsWith('.usearch') || (name.startsWith(`${base}.json.`) && name.endsWith('.tmp'))) {
      rmSync(path.join(dir, name), { force: true });
    }
  }
}

export function digest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}
