import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';

export interface EmbeddingContractOptions {
  /**
   * Whether the provider is a real language model whose vectors carry meaning (default true). A fake
   * that only hashes words opts out of the checks on related and unrelated texts.
   */
  readonly semantic?: boolean;
  /** Texts in the large-batch check; more than any adapter's batch size (default 100). */
  readonly largeBatch?: number;
}

/** Cosine similarity of two vectors; a plain dot product when both are unit length. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
}

function norm(v: Float32Array): number {
  let sum = 0;
  for (const x of v) sum += x * x;
  return Math.sqrt(sum);
}

/** Same vector up to float rounding. */
const SAME = 0.9999;

const TEXTS = [
  'The invoice is due at the end of the month and can be paid by bank transfer.',
  'Kafka consumer groups track an offset per partition so that processing resumes after a crash.',
  'Preheat the oven to 200 degrees and bake the bread for forty minutes.',
];

const RELATED_TRIPLES: ReadonlyArray<readonly [string, string, string]> = [
  [
    'How do I reset my password?',
    'Steps to recover a forgotten account password.',
    'The recipe calls for two cups of flour and a pinch of salt.',
  ],
  [
    'The stock market fell sharply after the interest rate announcement.',
    'Shares dropped as the central bank raised rates.',
    'My cat likes to sleep on the windowsill in the afternoon sun.',
  ],
  [
    'The football team won the championship final.',
    'The soccer club lifted the trophy after winning the cup match.',
    'Add the onions to the pan and fry them until golden.',
  ],
];

const SEARCH_DOCUMENTS = [
  'To change your password, open Settings, choose Security and follow the reset link sent by email.',
  'Our office is closed on public holidays; support answers emails on the next working day.',
  'The quarterly report shows revenue growth of twelve percent compared with last year.',
  'Water the tomato plants every morning and keep them in full sun.',
];

/**
 * The behaviour every {@link EmbeddingProvider} promises (see `embedding.port.ts`). `make` builds a
 * fresh provider; the suite closes it at the end.
 */
export function describeEmbeddingProviderContract(
  name: string,
  make: () => Promise<EmbeddingProvider>,
  options: EmbeddingContractOptions = {},
): void {
  const semantic = options.semantic ?? true;
  const largeBatch = options.largeBatch ?? 100;

  describe(`EmbeddingProvider contract: ${name}`, () => {
    let provider: EmbeddingProvider;

    beforeAll(async () => {
      provider = await make();
    });

    afterAll(async () => {
      await provider?.close();
    });

    it('names itself and a model tagged with the provider, with a positive dimension count', () => {
      expect(provider.provider).toMatch(/^[a-z]+$/);
      expect(provider.model.startsWith(`${provider.provider}/`)).toBe(true);
      expect(provider.model.length).toBeGreaterThan(provider.provider.length + 1);
      expect(Number.isInteger(provider.dimensions)).toBe(true);
      expect(provider.dimensions).toBeGreaterThan(0);
    });

    it('returns one finite unit-length Float32Array of `dimensions` numbers per text', async () => {
      const vectors = await provider.embedDocuments(TEXTS);
      expect(vectors).toHaveLength(TEXTS.length);
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v).toHaveLength(provider.dimensions);
        expect(v.every(Number.isFinite)).toBe(true);
        expect(norm(v)).toBeCloseTo(1, 3);
      }
    });

    it('keeps input order, and a text embeds the same alone as in a batch', async () => {
      const batch = await provider.embedDocuments(TEXTS);
      const reversed = await provider.embedDocuments([...TEXTS].reverse());
      for (let i = 0; i < TEXTS.length; i += 1) {
        const [alone] = await provider.embedDocuments([TEXTS[i] as string]);
        expect(cosine(batch[i] as Float32Array, alone as Float32Array)).toBeGreaterThan(SAME);
        expect(cosine(reversed[TEXTS.length - 1 - i] as Float32Array, alone as Float32Array)).toBeGreaterThan(SAME);
      }
      // Distinct texts give distinct vectors, so the order check above could not pass by accident.
      expect(cosine(batch[0] as Float32Array, batch[1] as Float32Array)).toBeLessThan(0.99);
      expect(cosine(batch[1] as Float32Array, batch[2] as Float32Array)).toBeLessThan(0.99);
    });

    it('is deterministic: the same text embeds to the same vector on every call', async () => {
      const first = await provider.embedDocuments(TEXTS);
      const second = await provider.embedDocuments(TEXTS);
      first.forEach((v, i) => {
        expect(cosine(v, second[i] as Float32Array)).toBeGreaterThan(SAME);
      });
      const q1 = await provider.embedQuery(TEXTS[0] as string);
      const q2 = await provider.embedQuery(TEXTS[0] as string);
      expect(cosine(q1, q2)).toBeGreaterThan(SAME);
    });

    it('returns an empty list for no texts', async () => {
      await expect(provider.embedDocuments([])).resolves.toEqual([]);
    });

    it('embeds a query to a unit vector of the same dimensions', async () => {
      const q = await provider.embedQuery('where is the invoice?');
      expect(q).toBeInstanceOf(Float32Array);
      expect(q).toHaveLength(provider.dimensions);
      expect(q.every(Number.isFinite)).toBe(true);
      expect(norm(q)).toBeCloseTo(1, 3);
    });

    it(`embeds ${largeBatch} texts in one call, beyond any batch size, in order`, async () => {
      const texts = Array.from(
        { length: largeBatch },
        (_, i) => `Record ${i}: ${TEXTS[i % TEXTS.length]} Reference ${(i * 7919) % 1000}.`,
      );
      const vectors = await provider.embedDocuments(texts);
      expect(vectors).toHaveLength(largeBatch);
      for (const v of vectors) expect(v).toHaveLength(provider.dimensions);
      for (const i of [0, 1, Math.floor(largeBatch / 2), largeBatch - 1]) {
        const [alone] = await provider.embedDocuments([texts[i] as string]);
        expect(cosine(vectors[i] as Float32Array, alone as Float32Array)).toBeGreaterThan(SAME);
      }
    });

    it('serves concurrent calls, each with its own vectors in order', async () => {
      const a = Array.from({ length: 20 }, (_, i) => `${TEXTS[0]} (copy ${i})`);
      const b = Array.from({ length: 20 }, (_, i) => `${TEXTS[2]} (copy ${i})`);
      const [va, vb, q] = await Promise.all([
        provider.embedDocuments(a),
        provider.embedDocuments(b),
        provider.embedQuery(TEXTS[1] as string),
      ]);
      expect(va).toHaveLength(20);
      expect(vb).toHaveLength(20);
      const [soloA] = await provider.embedDocuments([a[7] as string]);
      const [soloB] = await provider.embedDocuments([b[13] as string]);
      expect(cosine(va[7] as Float32Array, soloA as Float32Array)).toBeGreaterThan(SAME);
      expect(cosine(vb[13] as Float32Array, soloB as Float32Array)).toBeGreaterThan(SAME);
      expect(cosine(q, await provider.embedQuery(TEXTS[1] as string))).toBeGreaterThan(SAME);
    });

    it('embeds non-English text and a text far longer than any model window', { timeout: 180_000 }, async () => {
      const long = Array.from({ length: 3000 }, (_, i) => `${TEXTS[i % TEXTS.length]}`).join(' ');
      expect(long.length).toBeGreaterThan(200_000);
      const vectors = await provider.embedDocuments(['naïve café — 東京 🚀 Größe', long]);
      for (const v of vectors) {
        expect(v).toHaveLength(provider.dimensions);
        expect(v.every(Number.isFinite)).toBe(true);
        expect(norm(v)).toBeCloseTo(1, 3);
      }
    });

    it.runIf(semantic)('scores a related pair of sentences above an unrelated pair', async () => {
      for (const [anchor, related, unrelated] of RELATED_TRIPLES) {
        const [va, vr, vu] = await provider.embedDocuments([anchor, related, unrelated]);
        expect(
          cosine(va as Float32Array, vr as Float32Array),
          `"${anchor}" should be closer to "${related}" than to "${unrelated}"`,
        ).toBeGreaterThan(cosine(va as Float32Array, vu as Float32Array));
      }
    });

    it.runIf(semantic)('ranks the document that answers a query first', async () => {
      const docs = await provider.embedDocuments(SEARCH_DOCUMENTS);
      const query = await provider.embedQuery('How can I change my password?');
      const scores = docs.map((d) => cosine(query, d));
      const best = scores.indexOf(Math.max(...scores));
      expect(SEARCH_DOCUMENTS[best]).toBe(SEARCH_DOCUMENTS[0]);
    });
  });
}
