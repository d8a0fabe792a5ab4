/**
 * Synthetic search data written straight through the document-store port (`createDocument`,
 * `putChunks`, `completeVersion`), because embedding 100k chunks with the real model would take
 * hours. Passages come from the corpus generator, or, given a Zipf vocabulary, are drawn from it
 * with natural term statistics (then the data also reports its distinct terms and how many chunks
 * each query's terms match); each vector is a random mix of two vectors the
 * real model computed (plus a little noise), normalised, so the data has the clustered shape of
 * real embeddings rather than the uniform spread of random vectors.
 */
import { createHash } from 'node:crypto';
import usearch from 'usearch';
import { v7 as uuidv7 } from 'uuid';
import type { ChunkInput, DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import { passage } from '../corpus.ts';
import { createRandom, type Random, seedFrom } from './random.ts';
import { type ZipfVocabulary, zipfPassage } from './zipf-corpus.ts';

export interface SyntheticData {
  /** Chunk ids in insertion order. */
  readonly ids: string[];
  /** Row-major vectors, `ids.length × dimensions`. */
  readonly matrix: Float32Array;
  readonly dimensions: number;
  readonly documents: number;
  /** With a Zipf vocabulary: the term statistics of the chunks written. */
  readonly terms?: TermStatistics;
}

export interface TermStatistics {
  /** Distinct terms (surface forms) in the chunks. */
  readonly distinct: number;
  /** Per query: the fraction of chunks holding at least one of its terms (what an OR of them matches). */
  readonly matchFractions: number[];
}

/** At least `count` real vectors to mix from: the ones recorded so far, topped up by embedding passages. */
export async function baseVectors(
  provider: EmbeddingProvider,
  recorded: Iterable<Float32Array>,
  count: number,
  seed: number,
): Promise<Float32Array[]> {
  const base = [...recorded];
  if (base.length >= count) return base;
  const rng = createRandom(seedFrom('base-vectors', seed));
  const texts = Array.from({ length: count - base.length }, () => passage(rng));
  base.push(...(await provider.embedDocuments(texts)));
  return base;
}

function mix(rng: Random, base: readonly Float32Array[], dimensions: number, out: Float32Array, at: number): void {
  const a = rng.pick(base);
  const b = rng.pick(base);
  const w = 0.55 + 0.4 * rng.next();
  const sigma = 0.35 / Math.sqrt(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    const x = w * (a[i] as number) + (1 - w) * (b[i] as number) + sigma * rng.normal();
    out[at + i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) out[at + i] = (out[at + i] as number) / norm;
}

/**
 * Writes `chunks` chunks in documents of `perDocument` into `workspaceId`, served from now on,
 * with `writers` documents written concurrently.
 */
export async function writeSyntheticChunks(
  store: DocumentStore,
  options: {
    workspaceId: string;
    chunks: number;
    perDocument: number;
    model: { model: string; dimensions: number };
    base: readonly Float32Array[];
    seed: number;
    writers?: number;
    onProgress?: (written: number) => void;
    /** Chunk text drawn from this vocabulary, and the queries (term ranks) whose matches to count. */
    text?: { vocabulary: ZipfVocabulary; queries: readonly (readonly number[])[] };
    /** Extra metadata of document `d` (0-based, in row order: its chunks are rows `d × perDocument` on). */
    documentMetadata?: (d: number) => Record<string, string | number | boolean>;
  },
): Promise<SyntheticData> {
  const { workspaceId, chunks, perDocument, model, base } = options;
  const dimensions = model.dimensions;
  const rng = createRandom(seedFrom(`synthetic-${chunks}`, options.seed));
  // The text has a stream of its own: the vectors are the same whichever text is written.
  const textRng = createRandom(seedFrom(`synthetic-text-${chunks}`, options.seed));
  const statistics = options.text ? termCounter(options.text.vocabulary, options.text.queries) : null;
  const content = (): string => {
    if (!options.text || !statistics) return passage(rng);
    const ranks: number[] = [];
    const text = zipfPassage(options.text.vocabulary, textRng, textRng.logNormal(170, 0.5, 60, 380), ranks);
    statistics.add(ranks);
    return text;
  };
  const ids: string[] = [];
  const matrix = new Float32Array(chunks * dimensions);
  await store.setIndexModel({ model: model.model, dimensions });
  const documents = Math.ceil(chunks / perDocument);
  let nextDocument = 0;
  let written = 0;
  const writeDocument = async (d: number) => {
    const first = d * perDocument;
    const count = Math.min(perDocument, chunks - first);
    const documentId = uuidv7();
    const inputs: ChunkInput[] = [];
    let offset = 0;
    let tokens = 0;
    for (let i = 0; i < count; i++) {
      const text = content();
      const row = first + i;
      mix(rng, base, dimensions, matrix, row * dimensions);
      const id = `${documentId}:1:${i}`;
      ids[row] = id;
      const chunkTokens = Math.round(text.length / 4);
      tokens += chunkTokens;
      inputs.push({
        id,
        documentId,
        workspaceId,
        version: 1,
        index: i,
        content: text,
        contentHash: createHash('sha256').update(text).digest('hex'),
        tokens: chunkTokens,
        startOffset: offset,
        endOffset: offset + text.length,
        page: null,
        metadata: { headings: [] },
        vector: matrix.slice(row * dimensions, (row + 1) * dimensions),
      });
      offset += text.length + 2;
    }
    const now = new Date().toISOString();
    await store.createDocument({
      id: documentId,
      workspaceId,
      source: 'bench',
      firstVersion: {
        name: `synthetic-${d}.md`,
        mimeType: 'text/markdown',
        sizeBytes: offset,
        contentHash: createHash('sha256').update(documentId).digest('hex'),
        storageKey: `bench/synthetic/${documentId}`,
        metadata: { synthetic: true, ...options.documentMetadata?.(d) },
        changeReason: null,
        restoredFrom: null,
        createdBy: 'bench',
        createdAt: now,
      },
    });
    await store.putChunks(inputs);
    await store.completeVersion(documentId, 1, {
      at: new Date().toISOString(),
      chunkCount: count,
      tokens,
      embeddingModel: model.model,
    });
    written += count;
    options.onProgress?.(written);
  };
  const writer = async () => {
    while (nextDocument < documents) await writeDocument(nextDocument++);
  };
  await Promise.all(Array.from({ length: options.writers ?? 4 }, writer));
  return {
    ids,
    matrix,
    dimensions,
    documents,
    ...(statistics ? { terms: statistics.result(chunks) } : {}),
  };
}

/** Counts distinct terms and, per query, the chunks holding any of its terms, one chunk at a time. */
function termCounter(vocabulary: ZipfVocabulary, queries: readonly (readonly number[])[]) {
  const seen = new Uint8Array(vocabulary.terms.length);
  const queriesOf: number[][] = Array.from({ length: vocabulary.terms.length }, () => []);
  queries.forEach((ranks, q) => {
    for (const rank of ranks) queriesOf[rank]?.push(q);
  });
  const matched = new Uint32Array(queries.length);
  const lastChunk = new Int32Array(queries.length).fill(-1);
  let chunk = 0;
  return {
    add(ranks: readonly number[]) {
      for (const rank of ranks) {
        seen[rank] = 1;
        for (const q of queriesOf[rank] as number[]) {
          if (lastChunk[q] !== chunk) {
            lastChunk[q] = chunk;
            matched[q] = (matched[q] as number) + 1;
          }
        }
      }
      chunk += 1;
    },
    result(chunks: number): TermStatistics {
      return {
        distinct: seen.reduce((sum, x) => sum + x, 0),
        matchFractions: Array.from(matched, (n) => n / Math.max(1, chunks)),
      };
    },
  };
}

/** Cosine of row `row` with `query` (both unit length). */
export function cosine(data: SyntheticData, row: number, query: Float32Array): number {
  const { matrix, dimensions } = data;
  const at = row * dimensions;
  let score = 0;
  for (let i = 0; i < dimensions; i++) score += (matrix[at + i] as number) * (query[i] as number);
  return score;
}

/** The `k` rows with the highest cosine with `query`, best first (exact, brute force). */
export function exactTopK(data: SyntheticData, query: Float32Array, k: number): Array<{ row: number; score: number }> {
  const best: Array<{ row: number; score: number }> = [];
  for (let row = 0; row < data.ids.length; row++) {
    const score = cosine(data, row, query);
    if (best.length < k || score > (best[best.length - 1] as { score: number }).score) {
      best.push({ row, score });
      best.sort((x, y) => y.score - x.score);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

/**
 * The `k` rows nearest each of `queries` by cosine, best first, by usearch's exact (brute-force,
 * native) search over the same matrix: {@link exactTopK}'s answer, in seconds at a million rows.
 */
export function exactTopKAll(data: SyntheticData, queries: readonly Float32Array[], k: number): number[][] {
  const flat = new Float32Array(queries.length * data.dimensions);
  queries.forEach((q, i) => {
    flat.set(q, i * data.dimensions);
  });
  const found = usearch.exactSearch(data.matrix, flat, data.dimensions, k, usearch.MetricKind.Cos, 0) as unknown as {
    keys: BigUint64Array;
  };
  return queries.map((_, i) => Array.from(found.keys.subarray(i * k, (i + 1) * k), Number));
}
