import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createCohereEmbeddingProvider } from '../../core/ports/embedding/cohere.adapter.ts';
import { createLocalEmbeddingProvider } from '../../core/ports/embedding/local.adapter.ts';
import { createOpenAiEmbeddingProvider } from '../../core/ports/embedding/openai.adapter.ts';
import { createTransformersEmbeddingProvider } from '../../core/ports/embedding/transformers.adapter.ts';
import { type CohereFake, startCohereFake } from '../../support/cohere-fake.ts';
import { type OpenAiEmbeddingsFake, startOpenAiEmbeddingsFake } from '../../support/openai-embeddings-fake.ts';
import { describeEmbeddingProviderContract } from './embedding.contract.ts';

const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '.models');
const MINILM = 'Xenova/all-MiniLM-L6-v2';

describeEmbeddingProviderContract('local (Universal Sentence Encoder Lite)', () => createLocalEmbeddingProvider());

if (existsSync(path.join(MODELS_DIR, MINILM, 'config.json'))) {
  describeEmbeddingProviderContract(`transformers (${MINILM})`, () =>
    createTransformersEmbeddingProvider({ model: MINILM, modelPath: MODELS_DIR, allowRemote: false }),
  );
} else {
  describe.skip(`EmbeddingProvider contract: transformers — skipped: tests/.models/${MINILM} is missing; run \`bash tests/setup/fetch-minilm.sh\` to fetch it`, () => {
    it('needs the test model', () => {});
  });
}

let fake: CohereFake;
let openAi: OpenAiEmbeddingsFake;
beforeAll(async () => {
  fake = await startCohereFake({ dimensions: 1024 });
  // A server that does not normalise and lists its answers last text first: both are the client's to handle.
  openAi = await startOpenAiEmbeddingsFake({ dimensions: 384, token: 'fake-openai-key', scale: 3, reverseOrder: true });
});
afterAll(async () => {
  await fake?.close();
  await openAi?.close();
});

describeEmbeddingProviderContract(
  'cohere (loopback fake)',
  () =>
    createCohereEmbeddingProvider({
      apiKey: fake.token,
      model: 'embed-english-v3.0',
      baseUrl: fake.url,
    }),
  { semantic: false },
);

describeEmbeddingProviderContract(
  'openai (loopback fake of the OpenAI embeddings API)',
  () =>
    createOpenAiEmbeddingProvider({
      url: openAi.url,
      model: openAi.model,
      apiKey: openAi.token,
      batchSize: 32,
      concurrency: 2,
      policy: { allowPrivate: true },
    }),
  { semantic: false },
);
