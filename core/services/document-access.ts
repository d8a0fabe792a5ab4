/**
 * Reads the document services share: a document or version of the caller's workspace (another
 * workspace's, a deleted one or a malformed id is `not-found`), and every chunk of a version.
 */
import { KbError } from '../errors/kb-error.ts';
import type { ChunkRecord, DocumentRecord, VersionRecord } from '../model/document-records.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { RequestContext } from './request-context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isDocumentId = (id: string): boolean => UUID.test(id);

export const documentNotFound = (documentId: string) =>
  new KbError('not-found', `Document ${documentId} was not found.`);

export async function loadDocument(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
): Promise<DocumentRecord> {
  if (!isDocumentId(documentId)) throw documentNotFound(documentId);
  const doc = await documents.getDocument(ctx.workspaceId, documentId);
  if (!doc) throw documentNotFound(documentId);
  return doc;
}

export async function loadVersion(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
  version: number,
): Promise<VersionRecord> {
  await loadDocument(documents, ctx, documentId);
  const record = await documents.getVersion(documentId, version);
  if (!record || record.workspaceId !== ctx.workspaceId) {
    throw new KbError('not-found', `Version ${version} of document ${documentId} was not found.`);
  }
  return record;
}

/** Every chunk of a version, in order, read a thousand at a time. */
export async function allChunks(documents: DocumentStore, documentId: string, version: number): Promise<ChunkRecord[]> {
  const out: ChunkRecord[] = [];
  let afterIndex = -1;
  for (;;) {
    const page = await documents.listChunks(documentId, version, { afterIndex, limit: 1000 });
    out.push(...page.chunks);
    if (page.chunks.length < 1000) return out;
    afterIndex = (page.chunks.at(-1) as ChunkRecord).index;
  }
}
