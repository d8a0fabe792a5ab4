import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import {
  createOpenAiEmbeddingProvider,
  type OpenAiEmbeddingOptions,
} from '../../../core/ports/embedding/openai.adapter.ts';
import { type OpenAiEmbeddingsFake, startOpenAiEmbeddingsFake } from '../../../support/openai-embeddings-fake.ts';

const texts = (n: number, tag = 'chunk') =>
  Array.from({ length: n }, (_, i) => `${tag} number ${i} about topic ${i % 7}`);

const ALLOW_LOOPBACK = { allowPrivate: true };

describe('openai embedding provider against the loopback fake', () => {
  let fake: OpenAiEmbeddingsFake;
  const open: EmbeddingProvider[] = [];
  const fakes: OpenAiEmbeddingsFake[] = [];
  let sleeps: number[];

  beforeAll(async () => {
    fake = await startOpenAiEmbeddingsFake({ dimensions: 384, token: 'sk-fake' });
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((p) => p.close()));
    await Promise.all(fakes.splice(0).map((f) => f.close()));
    fake.setLatency(0);
    fake.reset();
  });

  /** A provider on `server` (default: the shared fake); the start-up request is forgotten. */
  async function make(
    options: Partial<OpenAiEmbeddingOptions> = {},
    server: OpenAiEmbeddingsFake = fake,
  ): Promise<EmbeddingProvider> {
    sleeps = [];
    const provider = await createOpenAiEmbeddingProvider({
      url: server.url,
      model: server.model,
      apiKey: server.token,
      policy: ALLOW_LOOPBACK,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options,
    });
    open.push(provider);
    server.reset();
    return provider;
  }

  async function another(options: Parameters<typeof startOpenAiEmbeddingsFake>[0]): Promise<OpenAiEmbeddingsFake> {
    const server = await startOpenAiEmbeddingsFake(options);
    fakes.push(server);
    return server;
  }

  it('asks once at start for the vector size, then sends batches of batchSize texts with the model and key, vectors in order', async () => {
    const provider = await createOpenAiEmbeddingProvider({
      url: fake.url,
      model: fake.model,
      apiKey: fake.token,
      batchSize: 10,
      policy: ALLOW_LOOPBACK,
    });
    open.push(provider);
    expect(fake.calls).toHaveLength(1);
    expect(provider.dimensions).toBe(384);
    expect(provider.model).toBe(`openai/${fake.model}`);
    expect(provider.provider).toBe('openai');
    fake.reset();

    const input = texts(25);
    const vectors = await provider.embedDocuments(input);
    expect(fake.violations).toEqual([]);
    expect(fake.calls.map((c) => c.inputs.length)).toEqual([10, 10, 5]);
    for (const call of fake.calls) {
      expect(call).toMatchObject({ method: 'POST', path: '/v1/embeddings', authorization: 'Bearer sk-fake' });
      expect(call.body).toEqual({ model: fake.model, input: call.inputs });
    }
    expect(fake.calls.flatMap((c) => c.inputs)).toEqual(input);
    vectors.forEach((v, i) => {
      expect(Array.from(v)).toEqual(Array.from(fake.vectorFor(input[i] as string)));
    });
  });

  it('puts answers in index order and scales them to unit length', async () => {
    const server = await another({ dimensions: 64, scale: 7.5, reverseOrder: true });
    const provider = await make({}, server);
    const input = texts(5);
    const vectors = await provider.embedDocuments(input);
    vectors.forEach((v, i) => {
      const expected = server.vectorFor(input[i] as string);
      v.forEach((x, j) => {
        expect(x).toBeCloseTo(expected[j] as number, 5);
      });
    });
    // No key configured: no Authorization header at all.
    expect(server.calls[0]?.authorization).toBeNull();
  });

  it('keeps at most `concurrency` requests in flight, and uses that many', async () => {
    const provider = await make({ batchSize: 4, concurrency: 3 });
    fake.setLatency(50);
    const input = texts(40);
    const [documents, other] = await Promise.all([
      provider.embedDocuments(input),
      provider.embedDocuments(texts(8, 'other')),
    ]);
    expect(fake.peakInFlight).toBe(3);
    expect(fake.calls).toHaveLength(12);
    expect(documents.map((v) => Array.from(v))).toEqual(input.map((t) => Array.from(fake.vectorFor(t))));
    expect(other).toHaveLength(8);
  });

  it('makes no request for an empty list', async () => {
    const provider = await make();
    await expect(provider.embedDocuments([])).resolves.toEqual([]);
    expect(fake.calls).toHaveLength(0);
  });

  it('retries a 429 after its Retry-After delay, then succeeds', async () => {
    const provider = await make();
    fake.failNext(1, { status: 429, retryAfter: '2' });
    const input = texts(3);
    const vectors = await provider.embedDocuments(input);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 200]);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
    expect(sleeps[0]).toBeLessThanOrEqual(2200);
    expect(Array.from(vectors[2] as Float32Array)).toEqual(Array.from(fake.vectorFor(input[2] as string)));
  });

  it('retries 500s and 503s with growing jittered backoff when no Retry-After is given', async () => {
    const provider = await make({ baseDelayMs: 100, maxDelayMs: 10_000 });
    fake.failNext(1, { status: 500 });
    fake.failNext(2, { status: 503 });
    await provider.embedDocuments(texts(2));
    expect(fake.calls.map((c) => c.status)).toEqual([500, 503, 503, 200]);
    const [d1, d2, d3] = sleeps as [number, number, number];
    expect(sleeps).toHaveLength(3);
    expect(d1).toBeGreaterThanOrEqual(50);
    expect(d1).toBeLessThanOrEqual(100);
    expect(d2).toBeGreaterThanOrEqual(100);
    expect(d2).toBeLessThanOrEqual(200);
    expect(d3).toBeGreaterThanOrEqual(200);
    expect(d3).toBeLessThanOrEqual(400);
  });

  it('waits for real when no sleep is injected (Retry-After: 0)', async () => {
    const provider = await createOpenAiEmbeddingProvider({
      url: fake.url,
      model: fake.model,
      apiKey: fake.token,
      policy: ALLOW_LOOPBACK,
    });
    open.push(provider);
    fake.reset();
    fake.failNext(2, { status: 429, retryAfter: '0' });
    const [vector] = await provider.embedDocuments(['hello there']);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 429, 200]);
    expect(Array.from(vector as Float32Array)).toEqual(Array.from(fake.vectorFor('hello there')));
  });

  it('gives up after maxAttempts with a retriable embedding-failed carrying the last Retry-After', async () => {
    const provider = await make({ maxAttempts: 4 });
    fake.failNext(10, { status: 429, retryAfter: '0' });
    const error = await provider.embedDocuments(texts(5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KbError);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true, retryAfter: 0 });
    expect((error as KbError).message).toMatch(/after 4 attempts: HTTP 429: injected failure 429/);
    expect(fake.calls).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
  });

  it('stops at once when Retry-After is longer than it is willing to wait, passing the delay on', async () => {
    const provider = await make({ maxRetryAfterMs: 30_000 });
    fake.failNext(1, { status: 503, retryAfter: '3600' });
    const error = await provider.embedDocuments(texts(1)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true, retryAfter: 3600 });
    expect(fake.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("fails a 400 at once with a non-retriable embedding-failed quoting the server's message", async () => {
    const provider = await make();
    fake.failNext(1, {
      status: 400,
      body: JSON.stringify({
        error: 'Input validation error: inputs must have less than 512 tokens',
        error_type: 'Validation',
      }),
    });
    const error = await provider.embedDocuments(texts(2)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: false });
    expect((error as KbError).message).toContain(
      'HTTP 400: Input validation error: inputs must have less than 512 tokens',
    );
    expect(fake.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('bounds every request in time and retries one that takes too long', async () => {
    const provider = await make({ timeoutMs: 200, maxAttempts: 2 });
    fake.setLatency(1_000);
    const started = performance.now();
    const error = await provider.embedDocuments(texts(1)).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(900 * 2);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true });
    expect((error as KbError).message).toMatch(/after 2 attempts: .*did not answer within 200 ms/);
    expect(sleeps).toHaveLength(1);
  });

  it('treats a refused connection as transient, also at start, and ends with a retriable embedding-failed', async () => {
    const gone = await startOpenAiEmbeddingsFake();
    await gone.close();
    sleeps = [];
    const error = await createOpenAiEmbeddingProvider({
      url: gone.url,
      model: gone.model,
      policy: ALLOW_LOOPBACK,
      maxAttempts: 3,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true });
    expect((error as KbError).message).toMatch(/after 3 attempts/);
    expect(sleeps).toHaveLength(2);
  });

  it('refuses calls after close', async () => {
    const provider = await make();
    await provider.close();
    await expect(provider.embedQuery('x')).rejects.toMatchObject({ code: 'internal-error' });
    expect(fake.calls).toHaveLength(0);
  });

  it('rejects an answer that is not the API shape, or of another size, as non-retriable', async () => {
    const provider = await make();
    const cases: Array<{ body: string; says: RegExp }> = [
      { body: 'not json', says: /not JSON/ },
      { body: '{"object":"list"}', says: /without a `data` list/ },
      { body: '{"data":[{"index":0,"embedding":[1,0]}]}', says: /1 embeddings for 2 texts/ },
      {
        body: '{"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":"AAAA"}]}',
        says: /not a list of numbers/,
      },
      {
        body: JSON.stringify({ data: [0, 0].map((index) => ({ index, embedding: Array(384).fill(1) })) }),
        says: /an embedding with index 0 for 2 texts/,
      },
      {
        body: JSON.stringify({ data: [0, 1].map((index) => ({ index, embedding: Array(384).fill(0) })) }),
        says: /a zero or non-finite vector/,
      },
    ];
    for (const c of cases) {
      fake.failNext(1, { status: 200, body: c.body });
      const error = await provider.embedDocuments(['a', 'b']).catch((e: unknown) => e);
      expect(error, c.body).toMatchObject({ code: 'embedding-failed', retriable: false });
      expect((error as KbError).message, c.body).toMatch(c.says);
    }
    fake.failNext(1, { status: 200, body: '{"data":[{"index":0,"embedding":[0.5,0.5]}]}' });
    const error = await provider.embedQuery('a').catch((e: unknown) => e);
    expect((error as KbError).message).toMatch(/2-dimensional vector for fake-embed, expected 384/);
  });
});

describe('openai embedding provider: configuration problems found at start', () => {
  let fake: OpenAiEmbeddingsFake;
  beforeAll(async () => {
    fake = await startOpenAiEmbeddingsFake({ dimensions: 256, token: 'sk-right', model: 'bge-small' });
  });
  afterAll(async () => {
    await fake.close();
  });

  const start = (options: Partial<OpenAiEmbeddingOptions>) =>
    createOpenAiEmbeddingProvider({
      url: fake.url,
      model: 'bge-small',
      apiKey: 'sk-right',
      policy: ALLOW_LOOPBACK,
      ...options,
    }).catch((e: unknown) => e);

  it('refuses a loopback server unless the outbound rules allow private addresses, saying which setting opens it', async () => {
    const calls = fake.calls.length;
    const error = await start({ policy: { allowPrivate: false } });
    expect(error).toMatchObject({ code: 'config-invalid' });
    expect((error as KbError).message).toContain('KB_OUTBOUND_ALLOW_PRIVATE=true');
    expect(fake.calls.length).toBe(calls);
  });

  it('turns a refused key, an unknown model and a wrong path into config-invalid naming the settings', async () => {
    for (const options of [
      { apiKey: 'sk-wrong' },
      { model: 'no-such-model' },
      { url: fake.url.replace(/\/v1$/, '') },
    ]) {
      const error = await start(options);
      expect(error, JSON.stringify(options)).toMatchObject({ code: 'config-invalid' });
      expect((error as KbError).message).toMatch(/KB_EMBEDDING_URL .*KB_EMBEDDING_MODEL and KB_EMBEDDING_API_KEY/);
    }
    expect(((await start({ apiKey: 'sk-wrong' })) as KbError).message).toContain('HTTP 401: Incorrect API key');
    expect(((await start({ model: 'no-such-model' })) as KbError).message).toContain(
      'HTTP 404: The model `no-such-model` does not exist',
    );
  });

  it('checks the configured vector size against the server', async () => {
    const error = await start({ dimensions: 384 });
    expect(error).toMatchObject({ code: 'config-invalid' });
    expect((error as KbError).message).toMatch(
      /answers 256-dimensional vectors for bge-small, but KB_EMBEDDING_DIMENSIONS is 384/,
    );
    const provider = (await start({ dimensions: 256 })) as EmbeddingProvider;
    expect(provider.dimensions).toBe(256);
    await provider.close();
  });
});
