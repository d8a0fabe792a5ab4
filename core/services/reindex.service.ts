import { embedMissing } from '../embedding/embed-missing.ts';
import type { ChunkRecord, IndexModel } from '../model/document-records.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';

export interface ReindexReport {
  readonly fromModel: string | null;
  readonly toModel: string;
  /** Chunks that now have a vector of the new model: `chunksEmbedded + chunksCached`. */
  readonly chunks: number;
  /** Chunks whose vector was computed in this run. */
  readonly chunksEmbedded: number;
  /** Chunks whose vector came from the vector cache (same text embedded before by this model). */
  readonly chunksCached: number;
  /** Distinct texts sent to the model (chunks with the same text share one embedding). */
  readonly textsEmbedded: number;
  /** Versions whose every chunk now has a vector of the new model (recorded as their model). */
  readonly versions: number;
  /** `--force`: every chunk was embedded again, the vector cache not consulted. */
  readonly forced: boolean;
}

export interface ReindexOptions {
  readonly onStart?: (total: number) => void;
  readonly onProgress?: (done: number) => void;
  /**
   * Embed every chunk again with the provider, even when the index is already on its model: the
   * vector cache is not consulted, and the new vectors replace the cached ones.
   */
  readonly force?: boolean;
}

export interface ReindexService {
  /** The model whose vectors the index holds, or null when it holds none yet. */
  indexModel(): Promise<IndexModel | null>;
  /** Moves the index to the configured provider's model (see {@link reindex}). */
  run(options?: ReindexOptions): Promise<ReindexReport>;
}

/**
 * Reindexing for `kb reindex` and the start-up check: tells which model the index holds, and
 * moves it to the configured embedding provider's model, loading the provider only then.
 */
export function createReindexService(deps: {
  documents: DocumentStore;
  getEmbeddings: () => Promise<EmbeddingProvider>;
  batchSize: number;
}): ReindexService {
  return {
    indexModel: () => deps.documents.getIndexModel(),
    async run(options = {}) {
      const provider = await deps.getEmbeddings();
      return reindex({ documents: deps.documents, provider, batchSize: deps.batchSize }, options);
    },
  };
}

/**
 * Moves the index to the provider's model: switches the index model (dropping vectors of the
 * old one), then re-embeds every stored chunk — vectors already in the cache for the new model
 * are reused — and writes the vectors back. Each version whose chunks all have a vector of the
 * new model then records it as its embedding model, so metadata changes and rollbacks keep
 * reusing its chunks without re-embedding. Safe to run again after an interruption. With `force`,
 * every distinct text is embedded again instead of being taken from the cache.
 */
export async function reindex(
  deps: { documents: DocumentStore; provider: EmbeddingProvider; batchSize: number },
  options: ReindexOptions = {},
): Promise<ReindexReport> {
  const { documents, provider } = deps;
  const current = await documents.getIndexModel();
  const target = { model: provider.model, dimensions: provider.dimensions };
  const switching = current !== null && (current.model !== target.model || current.dimensions !== target.dimensions);
  await documents.setIndexModel(target, { replace: switching || options.force === true });

  let total = 0;
  for await (const page of pages(documents)) total += page.length;
  options.onStart?.(total);

  const versions = new Map<string, { documentId: string; version: number }>();
  let done = 0;
  let withVector = 0;
  let chunksEmbedded = 0;
  let textsEmbedded = 0;
  for await (const page of pages(documents)) {
    const { embedded, vectors, fresh } = await embedMissing(documents, provider, page, deps.batchSize, {
      ignoreCache: options.force === true,
    });
    textsEmbedded += embedded;
    const byChunk = new Map<string, Float32Array>();
    for (const chunk of page) {
      const vector = vectors.get(chunk.contentHash);
      if (!vector) continue;
      byChunk.set(chunk.id, vector);
      withVector += 1;
      if (fresh.has(chunk.contentHash)) chunksEmbedded += 1;
    }
    await documents.setChunkVectors(target.model, byChunk);
    for (const chunk of page) {
      versions.set(`${chunk.documentId}:${chunk.version}`, { documentId: chunk.documentId, version: chunk.version });
    }
    done += page.length;
    options.onProgress?.(done);
  }
  let moved = 0;
  for (const { documentId, version } of versions.values()) {
    if (!(await documents.hasVectors(documentId, version))) continue;
    await documents.updateVersion(documentId, version, { embeddingModel: target.model });
    moved += 1;
  }
  return {
    fromModel: current?.model ?? null,
    toModel: target.model,
    chunks: withVector,
    chunksEmbedded,
    chunksCached: withVector - chunksEmbedded,
    textsEmbedded,
    versions: moved,
    forced: options.force === true,
  };
}

async function* pages(documents: DocumentStore, size = 256): AsyncGenerator<ChunkRecord[]> {
  let afterId = '';
  for (;;) {
    const page = await documents.scanChunks({ afterId, limit: size });
    if (page.length === 0) return;
    yield page;
    afterId = (page.at(-1) as ChunkRecord).id;
  }
}
