import { Worker } from 'node:worker_threads';
import type { GraphSettings } from './sqlite-vector-index-file.ts';

/** What the build thread is asked to build (its `workerData`). */
export interface BuildRequest extends GraphSettings {
  readonly kind: 'vector-index-build';
  /** The database file, opened read-only by the thread. */
  readonly databaseFile: string;
  /** The saved index's metadata file (`<database>.vectors.json`); the graph is saved beside it. */
  readonly metaFile: string;
  readonly model: string;
  /** Threads the graph is built on (0: every core). */
  readonly threads: number;
}

/** What the build thread answers once the graph is saved. */
export interface BuildResult {
  /** Vectors in the graph. */
  readonly size: number;
  /** The change-log position of the snapshot the graph was read from. */
  readonly cursor: number;
  /** How long the thread took, from opening the database to the saved files. */
  readonly ms: number;
}

/** Build threads of this process not yet exited. */
let running = 0;

/** How many build threads of this process are running (for diagnostics). */
export function runningIndexBuilds(): number {
  return running;
}

export interface IndexBuild {
  /** Resolves when the graph is saved; rejects when the thread failed or stopped before (once it is gone). */
  readonly done: Promise<BuildResult>;
  /** Stops the thread (when still running); resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Starts a worker thread that builds the vector index of `request.model` from the database file
 * and saves it beside the database (see `sqlite-vector-index-build.worker.ts`). The thread's entry
 * is a small ES module that registers tsx in the thread, then loads the TypeScript worker, as the
 * parse pool's threads do.
 */
export function startIndexBuild(request: Omit<BuildRequest, 'kind'>): IndexBuild {
  const worker = new Worker(new URL('./sqlite-vector-index-build-worker.bootstrap.mjs', import.meta.url), {
    workerData: { ...request, kind: 'vector-index-build' } satisfies BuildRequest,
    execArgv: [],
  });
  // The build is of use only to an open store: it never keeps the process alive on its own.
  worker.unref();
  running += 1;
  let exited = false;
  const gone = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      running -= 1;
      resolve();
    });
  });
  // A failure is reported once the thread is gone, so nothing it writes comes after.
  let failure: unknown = null;
  const done = new Promise<BuildResult>((resolve, reject) => {
    worker.once('message', (result: BuildResult) => resolve(result));
    worker.once('error', (error) => {
      failure = error;
    });
    worker.once('exit', (code) =>
      reject(failure ?? new Error(`the build thread stopped (exit code ${code}) before it was done`)),
    );
  });
  // A build stopped on purpose is no failure to report.
  done.catch(() => undefined);
  return {
    done,
    async stop() {
      if (!exited) await worker.terminate();
      await gone;
    },
  };
}
