import { KbError } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { IndexModelStore } from '../document-store.port.ts';
import { requireIndexModel, vectorBytes } from '../stored-records.ts';
import { INDEX_MODEL_KEY, type SqliteContext } from './sqlite-context.ts';
import { CHUNK_COLUMNS, type ChunkRow, toChunkRecord } from './sqlite-rows.ts';

/**
 * The {@link IndexModelStore} role of the SQLite document store: the model is a row of
 * `store_meta`; vectors sit on the chunk rows, tagged with the model they belong to.
 */
export function createSqliteIndexModelStore(context: SqliteContext): IndexModelStore {
  const { db, run, write, readIndexModel } = context;
  const statements = {
    anyVector: db.prepare<[], { one: number }>('SELECT 1 AS one FROM chunks WHERE vector IS NOT NULL LIMIT 1'),
    dropVectors: db.prepare(
      'UPDATE chunks SET vector = NULL, model = NULL WHERE vector IS NOT NULL OR model IS NOT NULL',
    ),
    metaPut: db.prepare(
      'INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    scanChunks: db.prepare<[string, number], ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?`,
    ),
    setChunkVector: db.prepare('UPDATE chunks SET vector = ?, model = ? WHERE id = ?'),
  };

  return {
    async getIndexModel() {
      return run(readIndexModel);
    },

    async setIndexModel(model: IndexModel, setOptions?: { replace?: boolean }) {
      if (model.model.length === 0 || !Number.isInteger(model.dimensions) || model.dimensions <= 0) {
        throw new KbError('bad-request', `Invalid index model ${JSON.stringify(model)}`);
      }
      const isWanted = (current: IndexModel | null) =>
        current !== null && current.model === model.model && current.dimensions === model.dimensions;
      // Already the model (the index stage asks once per document): no write transaction, so no
      // wait for the write lock and no move of the change mark.
      if (setOptions?.replace !== true && isWanted(run(readIndexModel))) return;
      write(() => {
        const current = readIndexModel();
        if (isWanted(current)) return;
        if (current !== null && statements.anyVector.get() !== undefined) {
          if (setOptions?.replace !== true) {
            throw new KbError(
              'model-mismatch',
              `The index holds vectors of ${current.model} (${current.dimensions} dimensions); ` +
                `switching to ${model.model} (${model.dimensions}) needs replace`,
            );
          }
          statements.dropVectors.run();
        }
        statements.metaPut.run(
          INDEX_MODEL_KEY,
          JSON.stringify({ model: model.model, dimensions: model.dimensions } satisfies IndexModel),
        );
      });
    },

    async scanChunks(page) {
      return run(() => statements.scanChunks.all(page.afterId, Math.max(0, Math.floor(page.limit))).map(toChunkRecord));
    },

    async setChunkVectors(model, vectors) {
      if (vectors.size === 0) return;
      write(() => {
        const index = readIndexModel();
        if (index === null || index.model !== model) {
          throw new KbError('model-mismatch', `Vectors of ${model} do not belong to the index model ${index?.model}`);
        }
        for (const [chunkId, vector] of vectors) requireIndexModel(index, vector, `Chunk ${chunkId}`);
        for (const [chunkId, vector] of vectors) statements.setChunkVector.run(vectorBytes(vector), model, chunkId);
      });
    },
  };
}
