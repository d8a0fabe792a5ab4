import { createHash } from 'node:crypto';
import type { VectorCache } from '../document-store.port.ts';
import type { OpenSearchContext } from './opensearch-context.ts';
import { type BulkAction, requireBulkSuccess } from './opensearch-http.ts';
import { decodeVector, encodeVector, type VectorCacheSource } from './opensearch-records.ts';

function cacheId(model: string, contentHash: string): string {
  return createHash('sha256')
    .update(JSON.stringify([model, contentHash]))
    .digest('hex');
}

/**
 * The {@link VectorCache} role of the OpenSearch document store: the `-vector-cache` index, one
 * record per model and content hash, read by id only.
 */
export function createOpenSearchVectorCache(context: OpenSearchContext): VectorCache {
  const { names, mget } = context;
  return {
    async getCachedVectors(model, contentHashes) {
      const found = new Map<string, Float32Array>();
      const ids = new Map(contentHashes.map((hash) => [cacheId(model, hash), hash]));
      const sources = await mget<VectorCacheSource>(names.vectorCache, [...ids.keys()]);
      for (const [id, source] of sources) {
        const hash = ids.get(id);
        if (hash !== undefined && source.model === model && source.content_hash === hash) {
          found.set(hash, decodeVector(source.vector));
        }
      }
      return found;
    },

    async putCachedVectors(model, vectors) {
      if (vectors.size === 0) return;
      // Read back by id only (real-time), so no refresh is needed.
      const results = await context.bulk(
        [...vectors].map(
          ([hash, vector]): BulkAction => ({
            kind: 'index',
            index: names.vectorCache,
            id: cacheId(model, hash),
            source: { model, content_hash: hash, vector: encodeVector(vector) } satisfies VectorCacheSource,
          }),
        ),
        false,
      );
      requireBulkSuccess(results, 'cache vectors');
    },
  };
}
