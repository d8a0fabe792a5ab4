import { createHash, randomUUID } from 'node:crypto';
import type { DocumentRecord } from '../../core/model/document-records.model.ts';
import type { ChunkInput, DocumentStore, NewVersion } from '../../core/ports/document-store/document-store.port.ts';

/** Hex SHA-256 of a text, as stored content hashes are. */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A small plain-text version to store, with a fresh storage key; `overrides` replace any field. */
export function plainVersion(overrides: Partial<NewVersion> = {}): NewVersion {
  return {
    name: 'notes.txt',
    mimeType: 'text/plain',
    sizeBytes: 10,
    contentHash: sha256('notes'),
    storageKey: `files/${randomUUID()}`,
    metadata: {},
    changeReason: null,
    restoredFrom: null,
    createdBy: 'key-test',
    createdAt: '2024-05-01T10:00:00.000Z',
    ...overrides,
  };
}

/** Chunk `index` of version `version` of `doc`, holding `content` (2 tokens, no page, no metadata). */
export function plainChunk(
  doc: { readonly id: string; readonly workspaceId: string },
  version: number,
  index: number,
  content: string,
  vector: Float32Array | null = null,
): ChunkInput {
  return {
    id: `${doc.id}:${version}:${index}`,
    documentId: doc.id,
    workspaceId: doc.workspaceId,
    version,
    index,
    content,
    contentHash: sha256(content),
    tokens: 2,
    startOffset: 0,
    endOffset: content.length,
    page: null,
    metadata: {},
    vector,
  };
}

/** Creates a document in `workspaceId` whose first version is a {@link plainVersion} with `overrides`. */
export function createPlainDocument(
  store: DocumentStore,
  workspaceId: string,
  overrides: Partial<NewVersion> = {},
): Promise<DocumentRecord> {
  return store.createDocument({
    id: randomUUID(),
    workspaceId,
    source: 'upload',
    firstVersion: plainVersion(overrides),
  });
}

/**
 * Stores `chunks` (all of one version) and completes their version at `at` (by default five
 * minutes after a {@link plainVersion}'s creation), counting their chunks and tokens.
 */
export async function putChunksAndComplete(
  store: DocumentStore,
  chunks: readonly ChunkInput[],
  options: { readonly at?: string; readonly embeddingModel: string | null },
): Promise<{ served: boolean }> {
  const first = chunks[0];
  if (first === undefined) throw new Error('no chunks to complete a version with');
  await store.putChunks(chunks);
  return store.completeVersion(first.documentId, first.version, {
    at: options.at ?? '2024-05-01T10:05:00.000Z',
    chunkCount: chunks.length,
    tokens: chunks.reduce((sum, chunk) => sum + chunk.tokens, 0),
    embeddingModel: options.embeddingModel,
  });
}

/**
 * Creates a document in `workspaceId` whose first version (a {@link plainVersion} with `metadata`)
 * holds one chunk of `content` without a vector and is completed, so it is served.
 */
export async function createServedDocument(
  store: DocumentStore,
  workspaceId: string,
  content: string,
  metadata: Record<string, unknown> = {},
): Promise<DocumentRecord> {
  const doc = await createPlainDocument(store, workspaceId, { metadata });
  await putChunksAndComplete(store, [plainChunk(doc, 1, 0, content)], { embeddingModel: null });
  return doc;
}
