import { KbError } from '../../errors/kb-error.ts';
import type { EmbeddingProvider } from './embedding.port.ts';

/** Throws `config-invalid` unless `batchSize` (a provider setting) is a positive integer. */
export function requireBatchSize(batchSize: number): void {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new KbError('config-invalid', `Embedding batch size must be a positive integer, got ${batchSize}`);
  }
}

/**
 * The `rows` vectors of `width` numbers stored one after another in `flat`, each scaled to unit
 * length. A zero or non-finite row fails with a non-retriable `embedding-failed` naming `source`
 * (e.g. "The embedding model").
 */
export function unitRows(flat: Float32Array, width: number, rows: number, source: string): Float32Array[] {
  const vectors: Float32Array[] = [];
  for (let r = 0; r < rows; r += 1) vectors.push(toUnitVector(flat.subarray(r * width, (r + 1) * width), source));
  return vectors;
}

function toUnitVector(values: Float32Array, source: string): Float32Array {
  let sum = 0;
  for (const v of values) sum += v * v;
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) {
    throw new KbError('embedding-failed', `${source} returned a zero or non-finite vector`, { retriable: false });
  }
  return Float32Array.from(values, (v) => v / norm);
}

export interface BatchedProviderSpec {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  /** Texts per `embedBatch` call. */
  readonly batchSize: number;
  /** Embeds one batch (at most `batchSize` texts), one vector per text in order. */
  embedBatch(texts: readonly string[]): Promise<Float32Array[]>;
  /** Frees what the provider holds; called once, by the first `close`. */
  release(): Promise<void>;
}

/**
 * An {@link EmbeddingProvider} over a batch function: `embedDocuments` embeds `batchSize` texts at
 * a time, one batch after another; queries embed as documents. After `close` (idempotent), calls
 * fail with `internal-error`, including a call in flight at its next batch.
 */
export function createBatchedProvider(spec: BatchedProviderSpec): EmbeddingProvider {
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new KbError('internal-error', `The ${spec.provider} embedding provider is closed`);
  };

  const embedDocuments = async (texts: readonly string[]): Promise<Float32Array[]> => {
    assertOpen();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += spec.batchSize) {
      assertOpen();
      vectors.push(...(await spec.embedBatch(texts.slice(i, i + spec.batchSize))));
    }
    return vectors;
  };

  return {
    provider: spec.provider,
    model: spec.model,
    dimensions: spec.dimensions,
    embedDocuments,
    async embedQuery(text) {
      const [vector] = await embedDocuments([text]);
      return vector as Float32Array;
    },
    async close() {
      if (closed) return;
      closed = true;
      await spec.release();
    },
  };
}
