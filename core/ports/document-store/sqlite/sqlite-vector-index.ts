import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { Database } from '../../sqlite/open-database.ts';
import { bytesToVector } from '../stored-records.ts';
import { type BuildResult, type IndexBuild, startIndexBuild } from './sqlite-vector-index-build.ts';
import {
  addRows,
  CONNECTIVITY,
  digest,
  type Graph,
  newGraph,
  readSavedIndex,
  removeStrayFiles,
  saveGraph,
  type VectorQuantization,
} from './sqlite-vector-index-file.ts';
import { createGraphWalk } from './sqlite-vector-index-walk.ts';

export { SCALAR_KIND, type VectorQuantization } from './sqlite-vector-index-file.ts';
export type { AnnMatches } from './sqlite-vector-index-walk.ts';

/** Changes waiting beyond which (and beyond the index's size) the index is rebuilt instead of caught up. */
const REBUILD_BACKLOG = 50_000;
/** Changes applied since the last save after which the index is saved again (besides at close). */
const SAVE_EVERY_CHANGES = 20_000;
/**
 * Default of {@link VectorIndexOptions.syncBelow}: 5,000 384-d vectors take one to two seconds to
 * build on a busy 2-core machine (20,000 took 17 s), about what starting the build thread costs.
 */
const SYNC_BUILD_BELOW = 5_000;
/** After a failed background build, how long vector queries scan exactly before it is tried again. */
const RETRY_AFTER_MS = 60_000;
/** Threads of a background build: every core but one, left to the queries that scan exactly meanwhile. */
const BUILD_THREADS = Math.max(1, availableParallelism() - 1);

export interface VectorIndexOptions {
  /** Database file the index lives beside (`<file>.vectors.*`); null keeps it in memory only. */
  readonly file: string | null;
  /**
   * Beam width of a query (usearch's `expansion_search`) on an index of up to 100,000 vectors; a
   * query of k candidates uses at least k, and a larger index a wider beam (`queryBeam`).
   */
  readonly expansionSearch: number;
  /** How the graph stores vectors (default `i8`); a saved index of another kind is rebuilt. */
  readonly quantization?: VectorQuantization;
  /**
   * A rebuild of at most this many vectors (default 5,000) runs before the query that needs it; a
   * larger one runs in a worker thread while vector queries scan exactly (an in-memory database
   * always builds before the query).
   */
  readonly syncBelow?: number;
  /** Told about rebuilds that take a while (a missing, stale or damaged index file) and their failures. */
  readonly log?: (message: string) => void;
}

/**
 * An HNSW index (usearch) over the chunk vectors of the index model, keyed by chunk `seq`, that
 * follows the `chunks` table through the `vector_changes` log the schema's triggers append to.
 *
 * - Exactness under writes: before every query the index applies the changes logged since its
 *   cursor — a chunk whose row now holds a vector of the index model is (re)added, any other is
 *   removed — so inserts, updates, deletes, purges, rollbacks and reindex by this or any other
 *   process sharing the database are seen by the next query. A change of index model rebuilds it.
 *   {@link sync} answers null instead — the caller then scans exactly — while the index is being
 *   built in the background, and for a while after such a build failed.
 * - Persistence: saved beside the database (a `*.usearch` file named by a random token and a JSON
 *   file naming it with its sha256 and the graph's settings, checked before loading, each written to
 *   a temporary name and renamed) at close and every {@link SAVE_EVERY_CHANGES} changes; the log is
 *   then pruned up to the saved cursor.
 * - Repair: at open, a saved index is used only when its model and graph settings (quantization,
 *   connectivity) match and the log still holds every change after its cursor; after catching up
 *   its size must equal the number of vector rows of the model. Otherwise (missing, stale, damaged,
 *   written with other settings, a backlog larger than the index, a model change) it is rebuilt from
 *   SQLite.
 * - Rebuilds: one of at most {@link VectorIndexOptions.syncBelow} vectors (or of an in-memory
 *   database) runs on the calling thread before the query. A larger one runs in a worker thread
 *   (`sqlite-vector-index-build.worker.ts`) that opens the database file read-only, reads the
 *   model's vectors and the log position in one read transaction, builds the graph and saves it as
 *   above; this thread then loads it (checksum checked) and applies the changes logged since that
 *   position, so writes go on meanwhile and are all in the index it switches to. A build that fails
 *   (the thread dies, or its index disagrees with the database) is logged and started again
 *   {@link RETRY_AFTER_MS} later; queries scan exactly meanwhile. {@link close} stops a running
 *   build and removes its files.
 * - Outside it: filters. The index answers nearest seqs only; the store applies served intervals
 *   and filters in SQL over them and decides when to fall back to an exact scan.
 */
export function createVectorIndex(db: Database, options: VectorIndexOptions) {
  const metaFile = options.file === null ? null : `${options.file}.vectors.json`;
  const quantization = options.quantization ?? 'i8';
  const syncBelow = options.syncBelow ?? SYNC_BUILD_BELOW;
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
  const countVectors = (model: IndexModel) => statements.countVectors.get(model.model)?.n ?? 0;

  interface State {
    readonly model: string;
    readonly dimensions: number;
    readonly index: Graph;
    cursor: number;
    unsaved: number;
  }
  let state: State | null = null;
  let opened = false;
  let closed = false;
  /** The build running in a worker thread, or null. */
  let building: { readonly model: IndexModel; readonly why: string; readonly job: IndexBuild } | null = null;
  /** Until when no build is started again after one failed (vector queries scan exactly meanwhile). */
  let retryAt = 0;

  const newIndex = (dimensions: number) =>
    newGraph({ dimensions, quantization, expansionSearch: options.expansionSearch });

  /**
   * Rebuilds the index of `model` from the database: here, before the query, when it is small (or
   * in memory); else in a worker thread, answering null (not ready) meanwhile.
   */
  function rebuild(model: IndexModel, why: string): State | null {
    if (Date.now() < retryAt) return null;
    if (options.file !== null && metaFile !== null) {
      const count = countVectors(model);
      if (count > syncBelow) {
        startBuild(options.file, metaFile, model, why, count);
        return null;
      }
    }
    const started = performance.now();
    const index = newIndex(model.dimensions);
    const cursor = db
      .transaction(() => {
        const cursor = statements.lastChange.get()?.id ?? 0;
        addRows(index, statements.allVectors.iterate(model.model), model.dimensions, 0);
        return cursor;
      })
      .deferred();
    const size = index.size();
    if (size > 0) {
      options.log?.(
        `vector index: rebuilt from the database (${why}): ${size} vectors of ${model.model} in ${Math.round(performance.now() - started)} ms`,
      );
    }
    return { model: model.model, dimensions: model.dimensions, index, cursor, unsaved: size };
  }

  function startBuild(databaseFile: string, meta: string, model: IndexModel, why: string, count: number): void {
    const job = startIndexBuild({
      databaseFile,
      metaFile: meta,
      model: model.model,
      dimensions: model.dimensions,
      quantization,
      expansionSearch: options.expansionSearch,
      threads: BUILD_THREADS,
    });
    const current = { model, why, job };
    building = current;
    options.log?.(
      `vector index: rebuilding from the database in the background (${why}): ${count} vectors of ${model.model}; vector queries scan exactly until it is ready`,
    );
    job.done.then(
      (result) => {
        if (building === current) adopt(model, why, result);
      },
      (error: unknown) => {
        if (building === current) buildFailed(String(error));
      },
    );
  }

  /** Makes the index a worker thread built and saved the index, caught up with the changes logged since. */
  function adopt(model: IndexModel, why: string, result: BuildResult): void {
    building = null;
    const started = performance.now();
    let reason: string;
    try {
      const loaded = load(model);
      if (typeof loaded === 'string') {
        reason = `its index could not be loaded: ${loaded}`;
      } else if (
        // Caught up and counted in one read snapshot.
        db.transaction(() => applyChanges(loaded) && loaded.index.size() === countVectors(model)).deferred()
      ) {
        state = loaded;
        opened = true;
        options.log?.(
          `vector index: rebuilt from the database in the background (${why}): ${result.size} vectors of ${model.model} in ${result.ms} ms, then loaded with the ${loaded.cursor - result.cursor} changes logged meanwhile in ${Math.round(performance.now() - started)} ms; vector queries use it`,
        );
        return;
      } else {
        reason = 'its index disagreed with the database';
      }
    } catch (error) {
      reason = String(error);
    }
    buildFailed(reason);
  }

  function buildFailed(reason: string): void {
    building = null;
    retryAt = Date.now() + RETRY_AFTER_MS;
    try {
      if (metaFile !== null) removeStrayFiles(metaFile);
    } catch {
      // Removed at the next save.
    }
    options.log?.(
      `vector index: building in the background failed (${reason}); vector queries scan exactly, it is tried again in ${RETRY_AFTER_MS / 1000} s`,
    );
  }

  /**
   * Stops a running build. Its files are removed at the next save, or here when `clean` (at close:
   * no other build can be writing its own files then).
   */
  async function stopBuild(clean: boolean): Promise<void> {
    const running = building;
    building = null;
    if (running === null) return;
    try {
      await running.job.stop();
      if (clean && metaFile !== null) removeStrayFiles(metaFile);
    } catch (error) {
      options.log?.(`vector index: stopping its build failed: ${String(error)}`);
    }
  }

  /** The saved index, or why there is none to use. */
  function load(model: IndexModel): State | string {
    if (metaFile === null) return 'no saved index';
    try {
      const meta = readSavedIndex(metaFile);
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
    saveGraph(current.index, metaFile, {
      model: current.model,
      dimensions: current.dimensions,
      quantization,
      cursor: current.cursor,
    });
    current.unsaved = 0;
    statements.prune.run(current.cursor);
  }

  return {
    /**
     * Brings the index up to date with the database for `model` (null: no index model, no index)
     * and returns how many vectors it holds, or null when it cannot answer now (being built in the
     * background, or such a build failed recently): the caller then scans exactly.
     */
    sync(model: IndexModel | null): number | null {
      if (closed) return null;
      if (model === null) {
        void stopBuild(false);
        state = null;
        return 0;
      }
      if (building !== null) {
        if (building.model.model === model.model && building.model.dimensions === model.dimensions) return null;
        // The index model changed while its index was being built.
        void stopBuild(false);
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
      if (state === null) return null;
      if (state.unsaved >= SAVE_EVERY_CHANGES) save(state);
      return state.index.size();
    },

    /** The change-log position the index has applied (0 before the first sync). */
    cursor(): number {
      return state?.cursor ?? 0;
    },

    /**
     * Why vector queries cannot use the index right now (they scan exactly meanwhile), or null when
     * it answers or has not been asked yet: for readiness checks and diagnostics.
     */
    lag(): string | null {
      if (closed) return null;
      if (building !== null) return 'vector index: being built from the database; vector queries scan exactly';
      if (state === null && Date.now() < retryAt) {
        return 'vector index: building it failed recently (see the log); vector queries scan exactly';
      }
      return null;
    },

    /**
     * The `k` nearest seqs of `vector` (call {@link sync} first); concurrent searches walk the
     * graph together (see `createGraphWalk`).
     */
    search: createGraphWalk(() => state, options.expansionSearch),

    /**
     * Stops a build running in the background (removing its files), saves the index beside the
     * database (when it changed) and frees it.
     */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await stopBuild(true);
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

export type VectorIndex = ReturnType<typeof createVectorIndex>;
