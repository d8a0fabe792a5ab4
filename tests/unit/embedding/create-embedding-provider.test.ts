import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../core/config/config.ts';
import { configFrom } from '../../../core/config/config.ts';
import { createEmbeddingProvider } from '../../../core/runtime/create-embedding-provider.ts';
import { type CohereFake, startCohereFake } from '../../../support/cohere-fake.ts';
import { startOpenAiEmbeddingsFake } from '../../../support/openai-embeddings-fake.ts';

const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.models');
const MINILM = 'Xenova/all-MiniLM-L6-v2';

const defaults: Config['embedding'] = {
  provider: 'local',
  batchSize: 32,
  concurrency: 2,
  transformersModel: MINILM,
  transformersModelPath: MODELS_DIR,
  transformersAllowRemote: false,
  threads: 2,
  modelFetch: false,
  modelRepositoryUrl: 'http://127.0.0.1:9',
  cohereApiKey: null,
  cohereModel: 'embed-english-v3.0',
  cohereBaseUrl: null,
  url: null,
  model: null,
  apiKey: null,
  dimensions: null,
  timeoutMs: 60_000,
};

describe('createEmbeddingProvider', () => {
  let fake: CohereFake;
  beforeAll(async () => {
    fake = await startCohereFake();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('builds the bundled local provider', async () => {
    const provider = await createEmbeddingProvider(defaults);
    try {
      expect(provider.provider).toBe('local');
      expect(provider.model).toBe('local/universal-sentence-encoder-lite-512');
      expect(await provider.embedQuery('hello')).toHaveLength(512);
    } finally {
      await provider.close();
    }
  });

  it('builds the Cohere provider at the configured base URL, capping batches at 96', async () => {
    const provider = await createEmbeddingProvider({
      ...defaults,
      provider: 'cohere',
      batchSize: 200,
      concurrency: 2,
      cohereApiKey: fake.token,
      cohereBaseUrl: fake.url,
    });
    try {
      expect(provider.model).toBe('cohere/embed-english-v3.0');
      const vectors = await provider.embedDocuments(Array.from({ length: 150 }, (_, i) => `text ${i}`));
      expect(vectors).toHaveLength(150);
      expect(fake.calls.map((c) => c.texts.length)).toEqual([96, 54]);
      expect(fake.violations).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  it('refuses the Cohere provider without an API key', async () => {
    await expect(createEmbeddingProvider({ ...defaults, provider: 'cohere' })).rejects.toMatchObject({
      code: 'config-invalid',
    });
  });

  it('builds the openai provider from its variables, under the outbound rules', async () => {
    const server = await startOpenAiEmbeddingsFake({ dimensions: 128, token: 'sk-test', model: 'm' });
    try {
      const variables = {
        KB_EMBEDDING_PROVIDER: 'openai',
        KB_EMBEDDING_URL: server.url,
        KB_EMBEDDING_MODEL: 'm',
        KB_EMBEDDING_API_KEY: 'sk-test',
        KB_EMBEDDING_BATCH_SIZE: '7',
      } as const;
      const config = configFrom({ ...variables, KB_OUTBOUND_ALLOW_PRIVATE: 'true' });
      const provider = await createEmbeddingProvider(config.embedding, config.outbound);
      try {
        expect(provider).toMatchObject({ provider: 'openai', model: 'openai/m', dimensions: 128 });
        await provider.embedDocuments(Array.from({ length: 15 }, (_, i) => `text ${i}`));
        expect(server.calls.slice(1).map((c) => c.inputs.length)).toEqual([7, 7, 1]);
      } finally {
        await provider.close();
      }
      const closed = configFrom(variables);
      await expect(createEmbeddingProvider(closed.embedding, closed.outbound)).rejects.toMatchObject({
        code: 'config-invalid',
        message: expect.stringContaining('KB_OUTBOUND_ALLOW_PRIVATE=true'),
      });
      expect(server.violations).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('explains what to do when the model is missing and may not be fetched', async () => {
    const attempt = createEmbeddingProvider({
      ...defaults,
      provider: 'transformers',
      transformersModel: 'BAAI/bge-small-en-v1.5',
      transformersModelPath: path.join(MODELS_DIR, 'no-such-folder'),
    });
    await expect(attempt).rejects.toMatchObject({ code: 'embedding-failed', retriable: false });
    await expect(attempt).rejects.toThrow(/kb models fetch.*KB_TRANSFORMERS_MODEL_PATH.*KB_EMBEDDING_PROVIDER=local/s);
  });

  it.runIf(existsSync(path.join(MODELS_DIR, MINILM, 'config.json')))(
    'builds the transformers provider from the configured model folder',
    async () => {
      const provider = await createEmbeddingProvider({
        ...defaults,
        provider: 'transformers',
        transformersModelPath: MODELS_DIR,
      });
      try {
        expect(provider.model).toBe(`transformers/${MINILM}`);
        expect(provider.dimensions).toBe(384);
      } finally {
        await provider.close();
      }
    },
  );
});
