import type { ChunkRecord, DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';

export interface ReindexReport {
  readonly fromModel: string | null;
  readonly toModel: string;
  readonly chunks: number;
  readonly embedded: number;
  readonly cached: number;
}

/**
 * Moves the index to the provider's model: switches the index model (dropping vectors of the
 * old one), then re-embeds every stored chunk — vectors already in the cache for the new model
 * are reused — and writes the vectors back. Safe to run again after an interruption.
 */
export async function reindex(
  deps: { documents: DocumentStore; provider: EmbeddingProvider; batchSize: number },
  options: { onStart?: (total: number) => void; onProgress?: (done: number) => void; force?: boolean } = {},
): Promise<ReindexReport> {
  const { documents, provider } = deps;
  const current = await documents.getIndexModel();
  const target = { model: provider.model, dimensions: provider.dimensions };
  const switching = current !== null && (current.model !== target.model || current.dimensions !== target.dimensions);
  await documents.setIndexModel(target, { replace: switching || options.force === true });

  let total = 0;
  for await (const page of pages(documents)) total += page.length;
  options.onStart?.(total);

  let done = 0;
  let embedded = 0;
  let cached = 0;
  for await (const page of pages(documents)) {
    const unique = new Map(page.map((c) => [c.contentHash, c.content]));
    const have = await documents.getCachedVectors(target.model, [...unique.keys()]);
    const missing = [...unique].filter(([hash]) => !have.has(hash));
    for (let i = 0; i < missing.length; i += deps.batchSize) {
      const batch = missing.slice(i, i + deps.batchSize);
      const vectors = await provider.embedDocuments(batch.map(([, text]) => text));
      const fresh = new Map(batch.map(([hash], j) => [hash, vectors[j] as Float32Array]));
      await documents.putCachedVectors(target.model, fresh);
      for (const [hash, vector] of fresh) have.set(hash, vector);
    }
    embedded += missing.length;
    cached += unique.size - missing.length;
    const byChunk = new Map<string, Float32Array>();
    for (const chunk of page) {
      const vector = have.get(chunk.contentHash);
      if (vector) byChunk.set(chunk.id, vector);
    }
    await documents.setChunkVectors(target.model, byChunk);
    done += page.length;
    options.onProgress?.(done);
  }
  return { fromModel: current?.model ?? null, toModel: target.model, chunks: done, embedded, cached };
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
