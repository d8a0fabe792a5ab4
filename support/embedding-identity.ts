import type { EmbeddingProvider } from '../core/ports/embedding/embedding.port.ts';

/** What names an embedding provider's vectors: its provider tag, model and dimensions. */
export type EmbeddingIdentity = Pick<EmbeddingProvider, 'provider' | 'model' | 'dimensions'>;

/** The identity of `like`, for a provider that stands in for it or wraps it to report as its own. */
export function sameIdentityAs(like: EmbeddingIdentity): EmbeddingIdentity {
  return { provider: like.provider, model: like.model, dimensions: like.dimensions };
}
