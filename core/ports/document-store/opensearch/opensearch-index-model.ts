import { KbError } from '../../../errors/kb-error.ts';
import type { IndexModel } from '../../../model/document-records.model.ts';
import type { IndexModelStore } from '../document-store.port.ts';
import { toChunkRecord } from '../stored-records.ts';
import { backoff, INDEX_MODEL_ID, NO_VECTORS, type OpenSearchContext } from './opensearch-context.ts';
import { VECTOR_FIELD_PREFIX, vectorField } from './opensearch-mappings.ts';
import type { ChunkSource } from './opensearch-records.ts';

/** Removes every stored vector and its model tag from a chunk. */
const DROP_VECTORS_SCRIPT = `
  def fields = new ArrayList();
  for (def key : ctx._source.keySet()) { if (key.startsWith(params.prefix)) { fields.add(key); } }
  for (def key : fields) { ctx._source.remove(key); }
  ctx._source.model = null;`;

/**
 * The {@link IndexModelStore} role of the OpenSearch document store: the model is a record of the
 * `-meta` index; each dimension count has its own vector field on the chunks.
 */
export function createOpenSearchIndexModelStore(context: OpenSearchContext): IndexModelStore {
  const {
    names,
    getGuarded,
    put,
    search,
    count,
    chunkIds,
    bulkUpdate,
    searchLimit,
    readIndexModel,
    queryIndexModel,
    requireVectorOf,
    ensureVectorField,
  } = context;

  /** Removes vectors (and model tags) from every chunk except those already of `keep`. */
  async function dropVectors(keep: IndexModel): Promise<void> {
    const ids = await chunkIds({
      bool: {
        filter: [{ exists: { field: 'model' } }],
        must_not: [
          {
            bool: {
              filter: [{ term: { model: keep.model } }, { exists: { field: vectorField(keep.dimensions) } }],
            },
          },
        ],
      },
    });
    const body = { script: { lang: 'painless', source: DROP_VECTORS_SCRIPT, params: { prefix: VECTOR_FIELD_PREFIX } } };
    await bulkUpdate(
      names.chunks,
      ids.map((id) => ({ id, body })),
      'drop vectors',
    );
  }

  return {
    async getIndexModel() {
      return queryIndexModel();
    },

    async setIndexModel(model: IndexModel, setOptions?: { replace?: boolean }) {
      if (model.model.length === 0 || !Number.isInteger(model.dimensions) || model.dimensions <= 0) {
        throw new KbError('bad-request', `Invalid index model ${JSON.stringify(model)}`);
      }
      const wanted: IndexModel = { model: model.model, dimensions: model.dimensions };
      // The index model as read at most one change-poll interval ago (the index stage asks once per
      // document): already the wanted one, nothing to do. A completion checks the model it writes
      // chunks for again, in the same read as the version and the document.
      const known = setOptions?.replace === true ? null : await queryIndexModel();
      if (known !== null && known.model === wanted.model && known.dimensions === wanted.dimensions) return;
      for (let attempt = 0; ; attempt += 1) {
        const current = await getGuarded<IndexModel>(names.meta, INDEX_MODEL_ID);
        if (
          current !== null &&
          current.source.model === wanted.model &&
          current.source.dimensions === wanted.dimensions
        ) {
          return;
        }
        if (current !== null && setOptions?.replace !== true) {
          if ((await count(names.chunks, { exists: { field: 'model' } })) > 0) {
            throw new KbError(
              'model-mismatch',
              `The index holds vectors of ${current.source.model} (${current.source.dimensions} dimensions); ` +
                `switching to ${wanted.model} (${wanted.dimensions}) needs replace`,
            );
          }
        }
        await ensureVectorField(wanted.dimensions);
        context.forgetIndexModel();
        const written = await put(names.meta, INDEX_MODEL_ID, wanted, current ?? 'create');
        context.forgetIndexModel();
        if (!written) {
          await backoff(attempt, 'set the index model');
          continue;
        }
        // Chunks written from now on carry the new model; every other vector goes.
        if (current !== null) await dropVectors(wanted);
        return;
      }
    },

    async scanChunks(page) {
      const size = searchLimit(page.limit);
      if (size === 0) return [];
      const body = await search<ChunkSource>(names.chunks, {
        query: { range: { id: { gt: page.afterId } } },
        sort: [{ id: 'asc' }],
        size,
        _source: NO_VECTORS,
      });
      return body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [toChunkRecord(hit._source)]));
    },

    async setChunkVectors(model, vectors) {
      if (vectors.size === 0) return;
      const index = await readIndexModel();
      if (index === null || index.model !== model) {
        throw new KbError('model-mismatch', `Vectors of ${model} do not belong to the index model ${index?.model}`);
      }
      for (const [id, vector] of vectors) requireVectorOf(index, vector, `Chunk ${id}`);
      const field = vectorField(index.dimensions);
      await bulkUpdate(
        names.chunks,
        [...vectors].map(([id, vector]) => ({ id, body: { doc: { [field]: Array.from(vector), model } } })),
        'set chunk vectors',
      );
    },
  };
}
