import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createCohereEmbeddingProvider } from '../../core/ports/embedding/cohere.adapter.ts';
import { createLocalEmbeddingProvider } from '../../core/ports/embedding/local.adapter.ts';
import { createTransformersEmbeddingProvider } from '../../core/ports/embedding/transformers.adapter.ts';
import { type CohereFake, startCohereFake } from '../../support/cohere-fake.ts';
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
beforeAll(async () => {
  fake = await startCohereFake({ dimensions: 1024 });
});
afterAll(async () => {
  await fake?.close();
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
