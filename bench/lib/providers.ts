/** Embedding providers the benchmarks wrap around the real one. */
import { createHash } from 'node:crypto';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { type EmbeddingIdentity, sameIdentityAs } from '../../support/embedding-identity.ts';
import { createRandom } from './random.ts';

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

/** Vectors by chunk-content hash: what the provider computed, kept for the cache provider. */
export type VectorCache = Map<string, Float32Array>;

/**
 * Passes every call to `inner` and keeps each document text it embedded with its vector. Closing
 * it does not close `inner` (the benchmark owns the real provider for the whole run).
 */
export function createRecordingProvider(inner: EmbeddingProvider): EmbeddingProvider & {
  /** Texts embedded by `embedDocuments`, in call order. */
  readonly texts: string[];
  /** How many texts each `embedDocuments` call had. */
  readonly calls: number[];
  readonly vectors: VectorCache;
} {
  const texts: string[] = [];
  const calls: number[] = [];
  const vectors: VectorCache = new Map();
  return {
    ...sameIdentityAs(inner),
    texts,
    calls,
    vectors,
    async embedDocuments(batch) {
      const result = await inner.embedDocuments(batch);
      calls.push(batch.length);
      batch.forEach((text, i) => {
        texts.push(text);
        vectors.set(hashOf(text), result[i] as Float32Array);
      });
      return result;
    },
    embedQuery: (text) => inner.embedQuery(text),
    async close() {},
  };
}

/** A unit vector derived from a text's hash: the stand-in for a chunk no real vector was recorded for. */
export function hashedVector(text: string, dimensions: number): Float32Array {
  const rng = createRandom(Number.parseInt(hashOf(text).slice(0, 8), 16));
  const v = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const x = rng.normal();
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/**
 * Answers from `cache` (vectors the real provider computed for the same chunks) and, for chunks
 * it has none for, with {@link hashedVector}; never runs a model. Same model tag and dimensions as
 * the real provider, so the pipeline does exactly the work it does with it, minus the model.
 */
export function createCacheProvider(
  like: EmbeddingIdentity,
  cache: VectorCache,
): EmbeddingProvider & { readonly hits: number; readonly misses: number } {
  let hits = 0;
  let misses = 0;
  const lookup = (text: string) => {
    const found = cache.get(hashOf(text));
    if (found) {
      hits++;
      return found;
    }
    misses++;
    return hashedVector(text, like.dimensions);
  };
  return {
    ...sameIdentityAs(like),
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
    embedDocuments: async (texts) => texts.map(lookup),
    embedQuery: async (text) => lookup(text),
    async close() {},
  };
}
