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
  const doc = await store.createDocument({
    id: randomUUID(),
    workspaceId,
    source: 'upload',
    firstVersion: plainVersion({ metadata }),
  });
  await store.putChunks([plainChunk(doc, 1, 0, content)]);
  await store.completeVersion(doc.id, 1, {
    at: '2024-05-01T10:05:00.000Z',
    chunkCount: 1,
    tokens: 2,
    embeddingModel: null,
  });
  return doc;
}
