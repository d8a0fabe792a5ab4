import type { Config } from '../config/config.ts';
import { KbError } from '../errors/kb-error.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { describeModel } from '../ports/embedding/model-catalog.ts';
import { ensureModel, type FetchProgress } from '../ports/embedding/model-fetch.ts';

/**
 * Makes sure the configured `transformers` model is on disk, fetching a catalogue model once when
 * it is missing and fetching is allowed (`onProgress` sees the download). Other providers need
 * nothing. Fails with `embedding-failed` saying what to do when the model is missing for good.
 */
export async function prepareEmbeddingModel(
  config: Config['embedding'],
  onProgress?: (progress: FetchProgress) => void,
): Promise<'present' | 'fetched' | 'not-needed'> {
  if (config.provider !== 'transformers' || config.transformersAllowRemote) return 'not-needed';
  return ensureModel(describeModel(config.transformersModel), {
    root: config.transformersModelPath,
    repositoryUrl: config.modelRepositoryUrl,
    allowFetch: config.modelFetch,
    ...(onProgress ? { onProgress } : {}),
  });
}

/** The model tag the configured provider stores with its vectors, known without loading it. */
export function configuredModelTag(config: Config['embedding']): string {
  switch (config.provider) {
    case 'local':
      return 'local/universal-sentence-encoder-lite-512';
    case 'transformers':
      return `transformers/${config.transformersModel}`;
    case 'cohere':
      return `cohere/${config.cohereModel}`;
    case 'openai':
      return `openai/${config.model ?? ''}`;
  }
}

/**
 * Builds the embedding provider the configuration names. Each adapter module is loaded only when
 * chosen, so the `local` default never loads ONNX Runtime and `cohere` loads no model.
 *
 * - `local`: the bundled offline model in a worker thread (its own batch size; `batchSize` is how many
 *   texts the pipeline hands over per call).
 * - `transformers` (the default): `transformersModel` from `transformersModelPath`, fetched there first
 *   when it is a catalogue model that is missing (see {@link prepareEmbeddingModel}); from the model
 *   hub only when `transformersAllowRemote`; `threads` ONNX Runtime threads.
 * - `cohere`: `cohereModel` with `cohereApiKey` at `cohereBaseUrl` (Cohere's own when null), at most
 *   `min(batchSize, 96)` texts a call.
 * - `openai`: `model` at the OpenAI-compatible API `url` (with `apiKey` when set), `batchSize` texts a
 *   request, `concurrency` requests in flight, each bounded by `timeoutMs`, reached under `outbound`
 *   (the service's outbound rules); asks the server once to learn (or check) `dimensions`.
 */
export async function createEmbeddingProvider(
  config: Config['embedding'],
  outbound: OutboundPolicy = { allowPrivate: false },
): Promise<EmbeddingProvider> {
  switch (config.provider) {
    case 'local': {
      const { createLocalEmbeddingProvider } = await import('../ports/embedding/local.adapter.ts');
      return createLocalEmbeddingProvider();
    }
    case 'transformers': {
      await prepareEmbeddingModel(config);
      const { createTransformersEmbeddingProvider } = await import('../ports/embedding/transformers.adapter.ts');
      return createTransformersEmbeddingProvider({
        model: config.transformersModel,
        modelPath: config.transformersModelPath,
        allowRemote: config.transformersAllowRemote,
        batchSize: config.batchSize,
        threads: config.threads,
      });
    }
    case 'cohere': {
      if (!config.cohereApiKey) {
        throw new KbError('config-invalid', 'KB_COHERE_API_KEY is required when KB_EMBEDDING_PROVIDER=cohere');
      }
      const { createCohereEmbeddingProvider, COHERE_MAX_BATCH } = await import('../ports/embedding/cohere.adapter.ts');
      return createCohereEmbeddingProvider({
        apiKey: config.cohereApiKey,
        model: config.cohereModel,
        baseUrl: config.cohereBaseUrl,
        batchSize: Math.min(config.batchSize, COHERE_MAX_BATCH),
      });
    }
    case 'openai': {
      if (!config.url || !config.model) {
        throw new KbError(
          'config-invalid',
          'KB_EMBEDDING_URL and KB_EMBEDDING_MODEL are required when KB_EMBEDDING_PROVIDER=openai',
        );
      }
      const { createOpenAiEmbeddingProvider } = await import('../ports/embedding/openai.adapter.ts');
      return createOpenAiEmbeddingProvider({
        url: config.url,
        model: config.model,
        apiKey: config.apiKey,
        batchSize: config.batchSize,
        concurrency: config.concurrency,
        dimensions: config.dimensions,
        timeoutMs: config.timeoutMs,
        policy: outbound,
      });
    }
    default: {
      const unknown: never = config.provider;
      throw new KbError('config-invalid', `Unknown embedding provider: ${String(unknown)}`);
    }
  }
}
