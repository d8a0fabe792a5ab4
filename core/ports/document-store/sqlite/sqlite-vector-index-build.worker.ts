import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { BuildRequest, BuildResult } from './sqlite-vector-index-build.ts';
import { addRows, newGraph, saveGraph } from './sqlite-vector-index-file.ts';

/**
 * The body of the thread that builds a large vector index in the background (started by
 * `startIndexBuild`): it opens the database file itself, read-only, reads the vectors of the model
 * and the change-log position in one read transaction (one snapshot), builds the graph, saves it
 * beside the database as the index itself saves (so a restart in between loads it) and answers
 * with the position the graph holds. The thread that started it then loads it and applies the
 * changes logged since.
 */
function build(request: BuildRequest): BuildResult {
  const started = performance.now();
  const db = new BetterSqlite3(request.databaseFile, { readonly: true, fileMustExist: true });
  const graph = newGraph(request);
  try {
    db.pragma('busy_timeout = 5000');
    const lastChange = db.prepare<[], { id: number }>(
      "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'), 0) AS id",
    );
    const vectors = db.prepare<[string], { seq: number; vector: Buffer }>(
      'SELECT seq, vector FROM chunks WHERE vector IS NOT NULL AND model = ?',
    );
    const cursor = db
      .transaction(() => {
        const cursor = lastChange.get()?.id ?? 0;
        addRows(graph, vectors.iterate(request.model), request.dimensions, request.threads);
        return cursor;
      })
      .deferred();
    db.close();
    saveGraph(graph, request.metaFile, {
      model: request.model,
      dimensions: request.dimensions,
      quantization: request.quantization,
      cursor,
    });
    return { size: graph.size(), cursor, ms: Math.round(performance.now() - started) };
  } finally {
    if (db.open) db.close();
  }
}

const request = workerData as BuildRequest | null;
if (parentPort !== null && request?.kind === 'vector-index-build') parentPort.postMessage(build(request));
