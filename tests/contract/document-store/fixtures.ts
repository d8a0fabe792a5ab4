import { randomUUID } from 'node:crypto';
import type { ChunkRecord, DocumentRecord, IndexModel } from '../../../core/model/document-records.model.ts';
import type { ChunkInput, NewVersion, SearchHit } from '../../../core/ports/document-store/document-store.port.ts';
import { plainChunk, sha256 } from '../../support/document-fixtures.ts';

export { sha256 };

// Data of the document-store contract: models, instants, versions, chunks and result helpers.

export const MODEL: IndexModel = { model: 'contract/test-embedding-8d', dimensions: 8 };
export const OTHER_MODEL: IndexModel = { model: 'contract/other-embedding-4d', dimensions: 4 };

const BASE = Date.parse('2024-03-01T00:00:00.000Z');
/** A fixed instant `minutes` after the suite's base time, in canonical ISO form. */
export const at = (minutes: number): string => new Date(BASE + minutes * 60_000).toISOString();
export const FAR_FUTURE = '2999-01-01T00:00:00.000Z';

export const newWorkspace = (): string => `ws-${randomUUID()}`;

/** A unit vector of `dimensions` from the given leading components (the rest are zero). */
export function unit(components: readonly number[], dimensions = MODEL.dimensions): Float32Array {
  const vector = new Float32Array(dimensions);
  components.forEach((value, index) => {
    vector[index] = value;
  });
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

/** The unit vector along axis `index`. */
export function axis(index: number, dimensions = MODEL.dimensions): Float32Array {
  const components = new Array<number>(index + 1).fill(0);
  components[index] = 1;
  return unit(components, dimensions);
}

export function newVersion(overrides: Partial<NewVersion> = {}): NewVersion {
  const content = randomUUID();
  return {
    name: 'report.txt',
    mimeType: 'text/plain',
    sizeBytes: 1234,
    contentHash: sha256(content),
    storageKey: `files/${content}`,
    metadata: {},
    changeReason: null,
    restoredFrom: null,
    createdBy: 'key-contract',
    createdAt: at(0),
    ...overrides,
  };
}

export interface DocOptions extends Partial<NewVersion> {
  readonly id?: string;
  readonly source?: string;
}

/** Chunk `index` of `doc`'s version `version`: a {@link plainChunk} with tokens, offsets, page and metadata of its own. */
export const chunkInput: typeof plainChunk = (doc, version, index, content, vector = null) => ({
  ...plainChunk(doc, version, index, content, vector),
  tokens: content.split(/\s+/).length,
  startOffset: index * 100,
  endOffset: index * 100 + content.length,
  page: index % 2 === 0 ? null : index,
  metadata: { position: index },
});

export function withVector(chunk: ChunkInput, vector: Float32Array | null): ChunkInput {
  return { ...chunk, vector };
}

export function record(chunk: ChunkInput): ChunkRecord {
  const { vector: _vector, ...rest } = chunk;
  return rest;
}

export const ids = (hits: readonly SearchHit[]): string[] => hits.map((hit) => hit.chunk.id);
export const docIds = (hits: readonly SearchHit[]): string[] =>
  [...new Set(hits.map((hit) => hit.chunk.documentId))].sort();
export const listIds = (documents: readonly DocumentRecord[]): string[] => documents.map((doc) => doc.id);
export const sorted = (values: readonly string[]): string[] => [...values].sort();
