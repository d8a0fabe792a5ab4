import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import {
  type CohereEmbeddingOptions,
  createCohereEmbeddingProvider,
  parseRetryAfter,
} from '../../../core/ports/embedding/cohere.adapter.ts';
import type { EmbeddingProvider } from '../../../core/ports/embedding/embedding.port.ts';
import { type CohereFake, startCohereFake } from '../../../support/cohere-fake.ts';

const texts = (n: number, tag = 'chunk') =>
  Array.from({ length: n }, (_, i) => `${tag} number ${i} about topic ${i % 7}`);

describe('cohere embedding provider against the loopback fake', () => {
  let fake: CohereFake;
  const open: EmbeddingProvider[] = [];
  let sleeps: number[];

  beforeAll(async () => {
    fake = await startCohereFake({ dimensions: 1024 });
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((p) => p.close()));
    fake.reset();
  });

  async function make(options: Partial<CohereEmbeddingOptions> = {}): Promise<EmbeddingProvider> {
    sleeps = [];
    const provider = await createCohereEmbeddingProvider({
      apiKey: fake.token,
      model: 'embed-english-v3.0',
      baseUrl: fake.url,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options,
    });
    open.push(provider);
    return provider;
  }

  it('sends 200 documents as three search_document calls of at most 96 texts, vectors in order', async () => {
    const provider = await make();
    const input = texts(200);
    const vectors = await provider.embedDocuments(input);

    expect(fake.violations).toEqual([]);
    expect(fake.calls.map((c) => c.texts.length)).toEqual([96, 96, 8]);
    for (const call of fake.calls) {
      expect(call.method).toBe('POST');
      expect(call.path).toBe('/v2/embed');
      expect(call.authorization).toBe(`Bearer ${fake.token}`);
      expect(call.body?.model).toBe('embed-english-v3.0');
      expect(call.body?.input_type).toBe('search_document');
      expect(call.body?.embedding_types).toEqual(['float']);
    }
    expect(fake.calls.flatMap((c) => c.texts)).toEqual(input);
    expect(vectors).toHaveLength(200);
    vectors.forEach((v, i) => {
      expect(Array.from(v)).toEqual(Array.from(fake.vectorFor(input[i] as string)));
    });
    expect(provider.model).toBe('cohere/embed-english-v3.0');
    expect(provider.dimensions).toBe(1024);
  });

  it('embeds a query with input_type search_query', async () => {
    const provider = await make();
    const vector = await provider.embedQuery('what is due this month?');
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]?.body?.input_type).toBe('search_query');
    expect(fake.calls[0]?.texts).toEqual(['what is due this month?']);
    expect(Array.from(vector)).toEqual(Array.from(fake.vectorFor('what is due this month?')));
  });

  it('uses a smaller batch size when told, and refuses one above 96', async () => {
    const provider = await make({ batchSize: 10 });
    await provider.embedDocuments(texts(25));
    expect(fake.calls.map((c) => c.texts.length)).toEqual([10, 10, 5]);
    await expect(make({ batchSize: 97 })).rejects.toMatchObject({ code: 'config-invalid' });
  });

  it('makes no call for an empty list', async () => {
    const provider = await make();
    await expect(provider.embedDocuments([])).resolves.toEqual([]);
    expect(fake.calls).toHaveLength(0);
  });

  it('retries a 429 after the Retry-After delay and then succeeds', async () => {
    const provider = await make();
    fake.failNext(1, { status: 429, retryAfter: '1' });
    const input = texts(3);
    const vectors = await provider.embedDocuments(input);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 200]);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(1000);
    expect(sleeps[0]).toBeLessThanOrEqual(1100);
    expect(Array.from(vectors[2] as Float32Array)).toEqual(Array.from(fake.vectorFor(input[2] as string)));
  });

  it('retries 503s with growing jittered backoff when no Retry-After is given', async () => {
    const provider = await make({ baseDelayMs: 100, maxDelayMs: 10_000 });
    fake.failNext(3, { status: 503 });
    await provider.embedDocuments(texts(2));
    expect(fake.calls.map((c) => c.status)).toEqual([503, 503, 503, 200]);
    expect(sleeps).toHaveLength(3);
    const [d1, d2, d3] = sleeps as [number, number, number];
    expect(d1).toBeGreaterThanOrEqual(50);
    expect(d1).toBeLessThanOrEqual(100);
    expect(d2).toBeGreaterThanOrEqual(100);
    expect(d2).toBeLessThanOrEqual(200);
    expect(d3).toBeGreaterThanOrEqual(200);
    expect(d3).toBeLessThanOrEqual(400);
  });

  it('waits for real when no sleep is injected (Retry-After: 0)', async () => {
    const provider = await createCohereEmbeddingProvider({
      apiKey: fake.token,
      model: 'embed-english-v3.0',
      baseUrl: fake.url,
    });
    open.push(provider);
    fake.failNext(2, { status: 429, retryAfter: '0' });
    const [vector] = await provider.embedDocuments(['hello there']);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 429, 200]);
    expect(Array.from(vector as Float32Array)).toEqual(Array.from(fake.vectorFor('hello there')));
  });

  it('gives up after maxAttempts with a retriable embedding-failed', async () => {
    const provider = await make({ maxAttempts: 4 });
    fake.failNext(10, { status: 429, retryAfter: '0' });
    const error = await provider.embedDocuments(texts(5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KbError);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true, retryAfter: 0 });
    expect((error as KbError).message).toMatch(/4 attempts.*429/);
    expect(fake.calls).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
  });

  it('stops at once when Retry-After is longer than it is willing to wait, passing the delay on', async () => {
    const provider = await make({ maxRetryAfterMs: 30_000 });
    fake.failNext(1, { status: 429, retryAfter: '3600' });
    const error = await provider.embedDocuments(texts(1)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true, retryAfter: 3600 });
    expect(fake.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('fails a 400 at once with a non-retriable embedding-failed', async () => {
    const provider = await make();
    fake.failNext(1, { status: 400 });
    const error = await provider.embedDocuments(texts(2)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KbError);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: false });
    expect((error as KbError).message).toContain('HTTP 400');
    expect(fake.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('fails a wrong API key at once with a non-retriable embedding-failed', async () => {
    const provider = await make({ apiKey: 'not-the-key' });
    const error = await provider.embedQuery('hello').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: false });
    expect((error as KbError).message).toContain('HTTP 401');
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]?.authorization).toBe('Bearer not-the-key');
  });

  it('asks once for the dimensions of a model it does not know', async () => {
    const other = await startCohereFake({ dimensions: 256 });
    try {
      const provider = await createCohereEmbeddingProvider({
        apiKey: other.token,
        model: 'embed-custom-test',
        baseUrl: other.url,
      });
      expect(provider.dimensions).toBe(256);
      expect(provider.model).toBe('cohere/embed-custom-test');
      expect(other.calls).toHaveLength(1);
      const [v] = await provider.embedDocuments(['a text']);
      expect(v).toHaveLength(256);
      await provider.close();
    } finally {
      await other.close();
    }
  });

  it('rejects vectors whose size differs from the known size of the model', async () => {
    const other = await startCohereFake({ dimensions: 384 });
    try {
      const provider = await createCohereEmbeddingProvider({
        apiKey: other.token,
        model: 'embed-english-v3.0',
        baseUrl: other.url,
      });
      const error = await provider.embedDocuments(['a text']).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'embedding-failed', retriable: false });
      expect((error as KbError).message).toMatch(/384-dimensional.*expected 1024/);
      await provider.close();
    } finally {
      await other.close();
    }
  });

  it('treats a refused connection as transient and ends with a retriable embedding-failed', async () => {
    const gone = await startCohereFake();
    const url = gone.url;
    await gone.close();
    const provider = await make({ baseUrl: url, maxAttempts: 3 });
    const error = await provider.embedDocuments(texts(1)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'embedding-failed', retriable: true });
    expect(sleeps).toHaveLength(2);
  });

  it('refuses calls after close', async () => {
    const provider = await make();
    await provider.close();
    await expect(provider.embedQuery('x')).rejects.toBeInstanceOf(KbError);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds, fractions and HTTP dates, and ignores junk', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('1.5')).toBe(1500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});
