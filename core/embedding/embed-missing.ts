import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';

export interface EmbedMissingOptions {
  /** Most missing texts to embed in this call; the rest is left (`remaining`). Default: all. */
  readonly limit?: number;
  /**
   * Stop after the batch that ends this many milliseconds after the call started (at least one batch
   * is embedded); the rest is left (`remaining`). Default: no time bound.
   */
  readonly yieldAfterMs?: number;
  /** Called before each provider batch, once its call has its turn (e.g. to stop there by throwing). */
  readonly beforeBatch?: () => Promise<void>;
  /** Embed every text again, as if the cache held none of them (the new vectors replace the cached ones). */
  readonly ignoreCache?: boolean;
  /**
   * Called with each batch's write of its vectors to the cache, with how many of `chunks` have a
   * cached vector once that write is done; both are awaited before the next batch (sent together,
   * a store that combines concurrent writes sends them in one request).
   */
  readonly afterBatch?: (chunksDone: number) => Promise<void>;
  /**
   * The cache's vectors of these chunks as the caller read them just before (by content hash), so
   * the call need not look them up again. Default: looked up here.
   */
  readonly cachedVectors?: ReadonlyMap<string, Float32Array>;
  /** Wraps each provider call (e.g. to wait for a turn of a shared gate). Default: called directly. */
  readonly aroundCall?: (call: () => Promise<Float32Array[]>) => Promise<Float32Array[]>;
}

/** What {@link embedMissing} did for a set of chunk texts. */
export interface EmbedMissingResult {
  /** Distinct texts embedded by this call. */
  readonly embedded: number;
  /** Distinct texts whose vector was in the cache already. */
  readonly cached: number;
  /** Distinct missing texts left for a later call (`limit`). */
  readonly remaining: number;
  /** The vector of every text that now has one, by content hash. */
  readonly vectors: ReadonlyMap<string, Float32Array>;
  /** Content hashes of the texts embedded by this call. */
  readonly fresh: ReadonlySet<string>;
}

/**
 * Fills the vector cache for the given chunk texts, in batches of `batchSize`; returns how many
 * were embedded and cached, and how many missing ones were left for a later call (`limit`).
 */
export async function embedMissing(
  documents: DocumentStore,
  provider: EmbeddingProvider,
  chunks: ReadonlyArray<{ content: string; contentHash: string }>,
  batchSize: number,
  options: EmbedMissingOptions = {},
): Promise<EmbedMissingResult> {
  const unique = new Map<string, string>();
  const uses = new Map<string, number>();
  for (const chunk of chunks) {
    unique.set(chunk.contentHash, chunk.content);
    uses.set(chunk.contentHash, (uses.get(chunk.contentHash) ?? 0) + 1);
  }
  const have = options.ignoreCache
    ? new Map<string, Float32Array>()
    : new Map(options.cachedVectors ?? (await documents.getCachedVectors(provider.model, [...unique.keys()])));
  const missing = [...unique].filter(([hash]) => !have.has(hash));
  let done = 0;
  for (const hash of have.keys()) done += uses.get(hash) ?? 0;
  const cached = unique.size - missing.length;
  const fresh = new Set<string>();
  const todo = Math.min(missing.length, options.limit ?? missing.length);
  const started = performance.now();
  let sent = 0;
  for (let i = 0; i < todo; i += batchSize) {
    if (i > 0 && options.yieldAfterMs !== undefined && performance.now() - started >= options.yieldAfterMs) break;
    const batch = missing.slice(i, Math.min(todo, i + batchSize));
    // The checkpoint runs once the call has its turn (inside `aroundCall`), so a stop requested
    // while this batch waited for a turn stops it before it reaches the provider.
    const call = async () => {
      await options.beforeBatch?.();
      return provider.embedDocuments(batch.map(([, content]) => content));
    };
    const vectors = await (options.aroundCall ? options.aroundCall(call) : call());
    sent += batch.length;
    const embedded = new Map(batch.map(([hash], j) => [hash, vectors[j] as Float32Array]));
    for (const [hash, vector] of embedded) {
      have.set(hash, vector);
      fresh.add(hash);
      done += uses.get(hash) ?? 0;
    }
    await Promise.all([documents.putCachedVectors(provider.model, embedded), options.afterBatch?.(done)]);
  }
  return { embedded: sent, cached, remaining: missing.length - sent, vectors: have, fresh };
}
