import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import usearch from 'usearch';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { Database } from '../../sqlite/open-database.ts';
import { bytesToVector } from '../stored-records.ts';

/** HNSW graph degree and build-time beam width: usearch's recommended values for 384-d text vectors. */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 128;
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
/** Rows read per step of a rebuild. */
const REBUILD_BATCH = 2048;
/** Changes waiting beyond which (and beyond the index's size) the index is rebuilt instead of caught up. */
const REBUILD_BACKLOG = 50_000;
/** Changes applied since the last save after which the index is saved again (besides at close). */
const SAVE_EVERY_CHANGES = 20_000;

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

export interface VectorIndexOptions {
  /** Database file the index lives beside (`<file>.vectors.*`); null keeps it in memory only. */
  readonly file: string | null;
  /**
   * Beam width of a query (usearch's `expansion_search`) on an index of up to 100,000 vectors; a
   * query of k candidates uses at least k, and a larger index a wider beam ({@link queryBeam}).
   */
  readonly expansionSearch: number;
  /** How the graph stores vectors (default `i8`); a saved index of another kind is rebuilt. */
  readonly quantization?: VectorQuantization;
  /** Told about rebuilds that take a while (a missing, stale or damaged index file). */
  readonly log?: (message: string) => void;
}

export interface AnnMatches {
  /** Chunk `seq`s, nearest first. */
  readonly seqs: number[];
  /** Whether the index holds more vectors than were returned. */
  readonly more: boolean;
}

/**
 * An HNSW index (usearch) over the chunk vectors of the index model, keyed by chunk `seq`, that
 * follows the `chunks` table through the `vector_changes` log the schema's triggers append to.
 *
 * - Exactness under writes: before every query the index applies the changes logged since its
 *   cursor — a chunk whose row now holds a vector of the index model is (re)added, any other is
 *   removed — so inserts, updates, deletes, purges, rollbacks and reindex by this or any other
 *   process sharing the database are seen by the next query. A change of index model rebuilds it.
 * - Persistence: saved beside the database (a `*.usearch` file named by a random token and a JSON
 *   file naming it with its sha256 and the graph's settings, checked before loading, each written to
 *   a temporary name and renamed) at close and every {@link SAVE_EVERY_CHANGES} changes; the log is
 *   then pruned up to the saved cursor.
 * - Repair: at open, a saved index is used only when its model and graph settings (quantization,
 *   connectivity) match and the log still holds every change after its cursor; after catching up
 *   its size must equal the number of vector rows of the model. Otherwise (missing, stale, damaged,
 *   written with other settings) it is rebuilt from SQLite.
 * - Outside it: filters. The index answers nearest seqs only; the store applies served intervals
 *   and filters in SQL over them and decides when to fall back to an exact scan.
 */
export function createVectorIndex(db: Database, options: VectorIndexOptions) {
  const metaFile = options.file === null ? null : `${options.file}.vectors.json`;
  const quantization = options.quantization ?? 'i8';
  const statements = {
    // The last id ever given to a change (AUTOINCREMENT never reuses one, even after pruning).
    lastChange: db.prepare<[], { id: number }>(
      "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'), 0) AS id",
    ),
    firstChangeAfter: db.prepare<[number], { id: number | null }>(
      'SELECT min(id) AS id FROM vector_changes WHERE id > ?',
    ),
    changesAfter: db.prepare<[number], { id: number; seq: number }>(
      'SELECT id, seq FROM vector_changes WHERE id > ? ORDER BY id',
    ),
    vectorsOf: db.prepare<[string, string], { seq: number; vector: Buffer }>(
      `SELECT seq, vector FROM chunks
       WHERE seq IN (SELECT value FROM json_each(?)) AND vector IS NOT NULL AND model = ?`,
    ),
    allVectors: db.prepare<[string], { seq: number; vector: Buffer }>(
      'SELECT seq, vector FROM chunks WHERE vector IS NOT NULL AND model = ?',
    ),
    countVectors: db.prepare<[string], { n: number }>(
      'SELECT count(*) AS n FROM chunks WHERE vector IS NOT NULL AND model = ?',
    ),
    prune: db.prepare('DELETE FROM vector_changes WHERE id <= ?'),
  };

  interface State {
    readonly model: string;
    readonly dimensions: number;
    readonly index: InstanceType<typeof usearch.Index>;
    cursor: number;
    unsaved: number;
  }
  let state: State | null = null;
  let opened = false;
  /** Searches waiting for the next walk (see `search`). */
  let pending: PendingSearch[] = [];

  function walkPending(): void {
    const batch = pending;
    pending = [];
    try {
      const current = state;
      const size = current?.index.size() ?? 0;
      if (current === null || size === 0) {
        for (const search of batch) search.resolve({ seqs: [], more: false });
        return;
      }
      // usearch walks with a beam of max(expansion_search, wanted): asking for the wider beam's
      // worth of neighbours widens the walk, and the nearest k of them are kept.
      const wanted = Math.min(size, Math.max(...batch.map((s) => s.k), queryBeam(options.expansionSearch, size)));
      const found = (keys: BigUint64Array, k: number): AnnMatches => {
        const seqs = Array.from(keys.subarray(0, Math.min(k, keys.length)), Number);
        return { seqs, more: size > seqs.length };
      };
      const [first] = batch as [PendingSearch];
      if (batch.length === 1) {
        first.resolve(found(current.index.search(first.vector, wanted, 1).keys, first.k));
        return;
      }
      const matrix = new Float32Array(batch.length * current.dimensions);
      batch.forEach((search, i) => {
        matrix.set(search.vector, i * current.dimensions);
      });
      // A matrix of several vectors answers with a batch of matches (the types take any
      // Float32Array for one vector).
      const matches = current.index.search(matrix, wanted, Math.min(batch.length, WALK_THREADS)) as unknown as {
        get(i: number): { keys: BigUint64Array };
      };
      batch.forEach((search, i) => {
        search.resolve(found(matches.get(i).keys, search.k));
      });
    } catch (error) {
      for (const search of batch) search.reject(error);
    }
  }

  const newIndex = (dimensions: number) =>
    new usearch.Index({
      dimensions,
      metric: usearch.MetricKind.Cos,
      quantization: SCALAR_KIND[quantization],
      multi: false,
      connectivity: CONNECTIVITY,
      expansion_add: EXPANSION_ADD,
      expansion_search: options.expansionSearch,
    });

  function rebuild(model: IndexModel, why: string): State {
    const started = performance.now();
    const index = newIndex(model.dimensions);
    const built = db
      .transaction(() => {
        const cursor = statements.lastChange.get()?.id ?? 0;
        let keys: number[] = [];
        let flat = new Float32Array(REBUILD_BATCH * model.dimensions);
        const flush = () => {
          if (keys.length === 0) return;
          index.add(BigUint64Array.from(keys, BigInt), flat.subarray(0, keys.length * model.dimensions), 0);
          keys = [];
          flat = new Float32Array(REBUILD_BATCH * model.dimensions);
        };
        for (const row of statements.allVectors.iterate(model.model)) {
          flat.set(bytesToVector(row.vector), keys.length * model.dimensions);
          keys.push(row.seq);
          if (keys.length === REBUILD_BATCH) flush();
        }
        flush();
        return cursor;
      })
      .deferred();
    const size = index.size();
    if (size > 0) {
      options.log?.(
        `vector index: rebuilt from the database (${why}): ${size} vectors of ${model.model} in ${Math.round(performance.now() - started)} ms`,
      );
    }
    return { model: model.model, dimensions: model.dimensions, index, cursor: built, unsaved: size };
  }

  /** The saved index, or why there is none to use. */
  function load(model: IndexModel): State | string {
    if (metaFile === null) return 'no saved index';
    try {
      const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Partial<SavedIndex>;
      if (meta.model !== model.model || meta.dimensions !== model.dimensions) return 'no saved index';
      // Written with other graph settings (or before they were recorded, when it was always f32).
      if (meta.quantization !== quantization || meta.connectivity !== CONNECTIVITY) {
        return `the saved index stores ${meta.quantization ?? 'f32'} vectors, ${quantization} are configured`;
      }
      if (typeof meta.cursor !== 'number' || typeof meta.file !== 'string') return 'the saved index disagreed';
      // Changes after the cursor must all still be in the log.
      if (meta.cursor > (statements.lastChange.get()?.id ?? 0)) return 'the saved index disagreed';
      const next = statements.firstChangeAfter.get(meta.cursor)?.id ?? null;
      if (next !== null && next > meta.cursor + 1) return 'the saved index disagreed';
      // A damaged file must never reach the native loader.
      const indexFile = path.join(path.dirname(metaFile), meta.file);
      if (digest(indexFile) !== meta.sha256) return 'the saved index disagreed';
      const index = newIndex(model.dimensions);
      index.load(indexFile);
      return { model: model.model, dimensions: model.dimensions, index, cursor: meta.cursor, unsaved: 0 };
    } catch {
      return 'no saved index';
    }
  }

  function catchUp(current: State): boolean {
    // One read snapshot for the log and the rows it names.
    return db.transaction(() => applyChanges(current)).deferred();
  }

  function applyChanges(current: State): boolean {
    const changes = statements.changesAfter.all(current.cursor);
    if (changes.length === 0) return true;
    const last = (changes[changes.length - 1] as { id: number }).id;
    // Ids are consecutive: a hole after the cursor means another process pruned changes this
    // index has not seen.
    if ((changes[0] as { id: number }).id > current.cursor + 1) return false;
    const seqs = [...new Set(changes.map((c) => c.seq))];
    const present = new Map<number, Float32Array>();
    for (const row of statements.vectorsOf.all(JSON.stringify(seqs), current.model)) {
      present.set(row.seq, bytesToVector(row.vector));
    }
    const added: number[] = [];
    for (const seq of seqs) {
      const key = BigInt(seq);
      if (current.index.contains(key)) current.index.remove(key);
      if (present.has(seq)) added.push(seq);
    }
    // One batch insert, spread over the cores (a catch-up after bulk writes can be large).
    if (added.length > 0) {
      const flat = new Float32Array(added.length * current.dimensions);
      added.forEach((seq, i) => {
        flat.set(present.get(seq) as Float32Array, i * current.dimensions);
      });
      current.index.add(BigUint64Array.from(added, BigInt), flat, 0);
    }
    current.cursor = last;
    current.unsaved += seqs.length;
    return true;
  }

  function save(current: State): void {
    if (metaFile === null || current.unsaved === 0) return;
    const dir = path.dirname(metaFile);
    const base = path.basename(metaFile, '.json');
    const file = `${base}.${randomBytes(6).toString('hex')}.usearch`;
    current.index.save(path.join(dir, file));
    const sha256 = digest(path.join(dir, file));
    const tmp = `${metaFile}.${randomBytes(6).toString('hex')}.tmp`;
    const saved: SavedIndex = {
      model: current.model,
      dimensions: current.dimensions,
      quantization,
      connectivity: CONNECTIVITY,
      cursor: current.cursor,
      file,
      sha256,
    };
    writeFileSync(tmp, JSON.stringify(saved));
    renameSync(tmp, metaFile);
    current.unsaved = 0;
    statements.prune.run(current.cursor);
    // Older index files are no longer named by the metadata.
    for (const name of readdirSync(dir)) {
      if (name.startsWith(`${base}.`) && name.endsWith('.usearch') && name !== file) {
        rmSync(path.join(dir, name), { force: true });
      }
    }
  }

  return {
    /**
     * Brings the index up to date with the database for `model` (null: no index model, no index)
     * and returns how many vectors it holds.
     */
    sync(model: IndexModel | null): number {
      if (model === null) {
        state = null;
        return 0;
      }
      if (state === null || state.model !== model.model || state.dimensions !== model.dimensions) {
        const loaded = state !== null ? 'the index model changed' : opened ? 'no saved index' : load(model);
        opened = true;
        if (
          typeof loaded !== 'string' &&
          catchUp(loaded) &&
          loaded.index.size() === statements.countVectors.get(model.model)?.n
        ) {
          state = loaded;
        } else {
          state = rebuild(model, typeof loaded === 'string' ? loaded : 'the saved index disagreed');
        }
      } else if (
        (statements.lastChange.get()?.id ?? 0) - state.cursor >
        Math.max(REBUILD_BACKLOG, state.index.size())
      ) {
        // A backlog as large as the index (a bulk load): reading the table in order is cheaper than
        // replaying every change.
        state = rebuild(model, 'a large backlog of changes');
      } else if (!catchUp(state)) {
        state = rebuild(model, 'changes were pruned by another process');
      }
      if (state.unsaved >= SAVE_EVERY_CHANGES) save(state);
      return state.index.size();
    },

    /** The change-log position the index has applied (0 before the first sync). */
    cursor(): number {
      return state?.cursor ?? 0;
    },

    /**
     * The `k` nearest seqs of `vector` (call {@link sync} first). Searches asked for in the same
     * turn of the event loop (concurrent queries) walk the graph together, on up to
     * {@link WALK_THREADS} threads, instead of one after the other on the main thread.
     */
    search(vector: Float32Array, k: number): Promise<AnnMatches> {
      return new Promise((resolve, reject) => {
        pending.push({ vector, k, resolve, reject });
        if (pending.length === 1) setImmediate(walkPending);
      });
    },

    /** Saves the index beside the database (when it changed) and frees it. */
    close(): void {
      if (state !== null) {
        try {
          save(state);
        } catch (error) {
          options.log?.(`vector index: could not be saved, it will be rebuilt at the next start: ${String(error)}`);
        }
      }
      state = null;
    },
  };
}

/** A search waiting for the next walk of the graph. */
interface PendingSearch {
  readonly vector: Float32Array;
  readonly k: number;
  resolve(matches: AnnMatches): void;
  reject(error: unknown): void;
}

/** What the JSON file beside a saved index records about it. */
interface SavedIndex {
  readonly model: string;
  readonly dimensions: number;
  readonly quantization: VectorQuantization;
  readonly connectivity: number;
  readonly cursor: number;
  /** The `*.usearch` file's name, in the same directory. */
  readonly file: string;
  readonly sha256: string;
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

function digest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

export type VectorIndex = ReturnType<typeof createVectorIndex>;
