/**
 * Turns text into vectors for semantic search.
 *
 * Contract:
 * - `model` names provider and model (e.g. `local/use-lite-512`, `cohere/embed-english-v3.0`);
 *   vectors of different models are never mixed in one index.
 * - Every vector has `dimensions` finite numbers and unit length (L2-normalised), so cosine
 *   similarity is a dot product.
 * - `embedDocuments` returns one vector per input, in input order; it batches internally as the
 *   provider requires. `embedQuery` may embed differently (e.g. Cohere's `search_query`).
 * - The same text embeds to the same vector (deterministic up to float rounding).
 * - Transient provider failures (HTTP 429/5xx, timeouts) are retried inside the provider, then
 *   surface as a retriable `KbError` (`embedding-failed`); bad requests as non-retriable.
 * - Outside the contract: rate limiting across processes, caching (the pipeline caches vectors by
 *   model and chunk-content hash).
 */
export interface EmbeddingProvider {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  embedDocuments(texts: readonly string[]): Promise<Float32Array[]>;
  embedQuery(text: string): Promise<Float32Array>;
  close(): Promise<void>;
}
