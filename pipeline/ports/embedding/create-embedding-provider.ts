import type { Config } from '../../config/config.ts';
import { KbError } from '../../errors/kb-error.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

/**
 * Builds the embedding provider the configuration names. Each adapter module is loaded only when
 * chosen, so the `local` default never loads ONNX Runtime and `cohere` loads no model.
 *
 * - `local`: the bundled offline model in a worker thread (its own batch size; `batchSize` is how many
 *   texts the pipeline hands over per call).
 * - `transformers`: `transformersModel` from `transformersModelPath` (or the hub cache), downloading
 *   only when `transformersAllowRemote`; `batchSize` texts a call (one for dynamically quantised models).
 * - `cohere`: `cohereModel` with `cohereApiKey` at `cohereBaseUrl` (Cohere's own when null), at most
 *   `min(batchSize, 96)` texts a call.
 */
export async function createEmbeddingProvider(config: Config['embedding']): Promise<EmbeddingProvider> {
  switch (config.provider) {
    case 'local': {
      const { createLocalEmbeddingProvider } = await import('./local.adapter.ts');
      return createLocalEmbeddingProvider();
    }
    case 'transformers': {
      const { createTransformersEmbeddingProvider } = await import('./transformers.adapter.ts');
      return createTransformersEmbeddingProvider({
        model: config.transformersModel,
        modelPath: config.transformersModelPath,
        allowRemote: config.transformersAllowRemote,
        batchSize: config.batchSize,
      });
    }
    case 'cohere': {
      if (!config.cohereApiKey) {
        throw new KbError('bad-request', 'KB_COHERE_API_KEY is required when KB_EMBEDDING_PROVIDER=cohere');
      }
      const { createCohereEmbeddingProvider, COHERE_MAX_BATCH } = await import('./cohere.adapter.ts');
      return createCohereEmbeddingProvider({
        apiKey: config.cohereApiKey,
        model: config.cohereModel,
        baseUrl: config.cohereBaseUrl,
        batchSize: Math.min(config.batchSize, COHERE_MAX_BATCH),
      });
    }
    default: {
      const unknown: never = config.provider;
      throw new KbError('bad-request', `Unknown embedding provider: ${String(unknown)}`);
    }
  }
}
