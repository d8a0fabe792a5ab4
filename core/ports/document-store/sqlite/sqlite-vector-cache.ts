import type { VectorCache } from '../document-store.port.ts';
import { bytesToVector, vectorBytes } from '../stored-records.ts';
import type { SqliteContext } from './sqlite-context.ts';

/** Most parameters bound in one `IN (...)` list of the vector cache lookup. */
const LOOKUP_BATCH = 500;

/** The {@link VectorCache} role of the SQLite document store: the `vector_cache` table. */
export function createSqliteVectorCache(context: SqliteContext): VectorCache {
  const { db, run, write } = context;
  const statements = {
    putCachedVector: db.prepare(
      `INSERT INTO vector_cache (model, content_hash, vector) VALUES (?, ?, ?)
       ON CONFLICT (model, content_hash) DO UPDATE SET vector = excluded.vector`,
    ),
  };

  return {
    async getCachedVectors(model, contentHashes) {
      return run(() => {
        const found = new Map<string, Float32Array>();
        const unique = [...new Set(contentHashes)];
        for (let start = 0; start < unique.length; start += LOOKUP_BATCH) {
          const batch = unique.slice(start, start + LOOKUP_BATCH);
          const rows = db
            .prepare(
              `SELECT content_hash, vector FROM vector_cache
               WHERE model = ? AND content_hash IN (${batch.map(() => '?').join(', ')})`,
            )
            .all(model, ...batch) as { content_hash: string; vector: Buffer }[];
          for (const row of rows) found.set(row.content_hash, bytesToVector(row.vector));
        }
        return found;
      });
    },

    async putCachedVectors(model, vectors) {
      if (vectors.size === 0) return;
      write(() => {
        for (const [hash, vector] of vectors) statements.putCachedVector.run(model, hash, vectorBytes(vector));
      });
    },
  };
}
