/**
 * A completed one-version document of text chunks (no file, no vectors) written straight into a
 * document store: what the keyword rows and probes search, without running the pipeline.
 */
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';

export async function writeTextDocument(
  store: DocumentStore,
  doc: { readonly id: string; readonly workspaceId: string; readonly name: string; readonly createdBy: string },
  contents: readonly string[],
): Promise<void> {
  await store.createDocument({
    id: doc.id,
    workspaceId: doc.workspaceId,
    source: 'upload',
    firstVersion: {
      name: doc.name,
      mimeType: 'text/plain',
      sizeBytes: 1,
      contentHash: 'x',
      storageKey: 'x',
      metadata: {},
      changeReason: null,
      restoredFrom: null,
      createdBy: doc.createdBy,
      createdAt: '2024-05-01T10:00:00.000Z',
    },
  });
  await store.putChunks(
    contents.map((content, i) => ({
      id: `${doc.id}:1:${i}`,
      documentId: doc.id,
      workspaceId: doc.workspaceId,
      version: 1,
      index: i,
      content,
      contentHash: String(i),
      tokens: 120,
      startOffset: 0,
      endOffset: content.length,
      page: null,
      metadata: {},
      vector: null,
    })),
  );
  await store.completeVersion(doc.id, 1, {
    at: '2024-05-01T10:05:00.000Z',
    chunkCount: contents.length,
    tokens: 120 * contents.length,
    embeddingModel: null,
  });
}
