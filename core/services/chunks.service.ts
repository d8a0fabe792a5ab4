import { KbError } from '../errors/kb-error.ts';
import type { ChunksView, ContextView, ContextWindowView } from '../model/response-views.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { decodeCursor, encodeCursor } from '../util/cursor.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { allChunks, loadDocumentVersion, loadVersion } from './document-access.ts';
import { chunkView } from './document-views.ts';
import type { RequestContext } from './request-context.ts';

export interface ChunksService {
  /** A page of a version's chunks (default: the served version, else the latest), in order. */
  chunks(
    ctx: RequestContext,
    documentId: string,
    query: { version?: number; cursor?: string; limit: number },
  ): Promise<ChunksView>;
  /**
   * A version's whole text, or with `chunkId` that chunk and `window` chunks either side. The
   * whole text is there once the version is completed (`conflict` before).
   */
  context(
    ctx: RequestContext,
    documentId: string,
    query: { version?: number; chunkId?: string; window: number },
  ): Promise<ContextView | ContextWindowView>;
}

/** A chunk cursor: the index of the last chunk of the page before. */
type ChunkCursor = { afterIndex: number };
const isChunkCursor = (v: unknown): v is ChunkCursor =>
  typeof v === 'object' && v !== null && Number.isInteger((v as ChunkCursor).afterIndex);

/**
 * Chunks and context: reads of what ingestion made of a version. Promises chunks in document
 * order, cursors that stay valid while the version exists, and nothing of another workspace.
 */
export function createChunksService(deps: { documents: DocumentStore; objects: ObjectStore }): ChunksService {
  const { documents, objects } = deps;
  return {
    async chunks(ctx, documentId, { version, cursor, limit }) {
      const v = (await loadDocumentVersion(documents, ctx, documentId, version)).record.version;
      const afterIndex = cursor ? decodeCursor(cursor, isChunkCursor).afterIndex : -1;
      const page = await documents.listChunks(documentId, v, { afterIndex, limit });
      const last = page.chunks.at(-1);
      const hasMore = last !== undefined && page.chunks.length === limit && last.index < page.total - 1;
      return {
        document_id: documentId,
        version: v,
        chunks: page.chunks.map(chunkView),
        pagination: {
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ afterIndex: last.index } satisfies ChunkCursor) : null,
          total: page.total,
        },
      };
    },

    async context(ctx, documentId, { version, chunkId, window }) {
      const { record } = await loadDocumentVersion(documents, ctx, documentId, version);
      const v = record.version;
      if (chunkId !== undefined) {
        const chunk = await documents.getChunk(chunkId);
        const missing = () => new KbError('not-found', `Chunk ${chunkId} was not found in document ${documentId}.`);
        if (!chunk || chunk.documentId !== documentId || chunk.workspaceId !== ctx.workspaceId) throw missing();
        // The chunk's own version must be visible to the caller's scope too.
        if (ctx.scope && chunk.version !== v)
          await loadVersion(documents, ctx, documentId, chunk.version).catch(() => {
            throw missing();
          });
        const from = Math.max(0, chunk.index - window);
        const page = await documents.listChunks(documentId, chunk.version, {
          afterIndex: from - 1,
          limit: chunk.index + window - from + 1,
        });
        return {
          document_id: documentId,
          version: chunk.version,
          chunk_id: chunkId,
          window,
          chunks: page.chunks.map(chunkView),
        };
      }
      if (record.status !== 'completed') {
        throw new KbError('conflict', `Version ${v} is ${record.status}; its text is available once it is completed.`);
      }
      const parsedKey = storageKeys.parsed(record.workspaceId, documentId, v);
      let content: string;
      if (await objects.stat(parsedKey)) {
        content = (JSON.parse((await objects.getBuffer(parsedKey)).toString('utf8')) as { text: string }).text;
      } else {
        content = (await allChunks(documents, documentId, v)).map((c) => c.content).join('\n\n');
      }
      return {
        document_id: documentId,
        version: v,
        content,
        tokens: record.tokens,
        chunk_count: record.chunkCount,
      };
    },
  };
}
