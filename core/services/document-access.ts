/**
 * Reads the document services share: a document or version of the caller's workspace (another
 * workspace's, a deleted one or a malformed id is `not-found`), and every chunk of a version.
 *
 * A caller with a scoped token (`ctx.scope`) sees only what its rules let through, and nothing
 * else exists for it (the same `not-found`): a document when its latest version (the one its view
 * shows) passes, a version when that version passes. This is the one place document reads check
 * it; search checks the same predicate (`access-rules.ts`).
 */
import { KbError } from '../errors/kb-error.ts';
import type { ChunkRecord, DocumentRecord, VersionRecord } from '../model/document-records.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import { versionVisible } from './access-rules.ts';
import type { RequestContext } from './request-context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isDocumentId = (id: string): boolean => UUID.test(id);

export const documentNotFound = (documentId: string) =>
  new KbError('not-found', `Document ${documentId} was not found.`);

const versionNotFound = (documentId: string, version: number) =>
  new KbError('not-found', `Version ${version} of document ${documentId} was not found.`);

/** Whether the caller's scope (if any) lets it see `version` of `doc`. */
export function canSee(ctx: RequestContext, doc: DocumentRecord, version: VersionRecord): boolean {
  return versionVisible(ctx.scope, {
    documentId: doc.id,
    source: doc.source,
    documentCreatedAt: doc.createdAt,
    mimeType: version.mimeType,
    metadata: version.metadata,
  });
}

/** The document of the workspace, whatever the caller's scope says of its versions. */
async function documentInWorkspace(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
): Promise<DocumentRecord> {
  if (!isDocumentId(documentId)) throw documentNotFound(documentId);
  const doc = await documents.getDocument(ctx.workspaceId, documentId);
  if (!doc) throw documentNotFound(documentId);
  return doc;
}

/** The document as its latest version shows it: `not-found` also when the caller's scope hides that version. */
export async function loadDocument(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
): Promise<DocumentRecord> {
  const doc = await documentInWorkspace(documents, ctx, documentId);
  if (!canSee(ctx, doc, doc.latest)) throw documentNotFound(documentId);
  return doc;
}

/**
 * The document and the version the caller reads when it names none (`version` absent: the served
 * one, else the latest), each `not-found` when missing or hidden by the caller's scope.
 */
export async function loadDocumentVersion(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
  version?: number,
): Promise<{ doc: DocumentRecord; record: VersionRecord }> {
  const doc = await documentInWorkspace(documents, ctx, documentId);
  const v = version ?? doc.servedVersion ?? doc.latestVersion;
  const record = v === doc.latestVersion ? doc.latest : await documents.getVersion(documentId, v);
  if (!record || record.workspaceId !== ctx.workspaceId || !canSee(ctx, doc, record)) {
    throw version === undefined ? documentNotFound(documentId) : versionNotFound(documentId, v);
  }
  return { doc, record };
}

export async function loadVersion(
  documents: DocumentStore,
  ctx: RequestContext,
  documentId: string,
  version: number,
): Promise<VersionRecord> {
  return (await loadDocumentVersion(documents, ctx, documentId, version)).record;
}

/**
 * What the scope rules know of a document that may have been deleted since (an `as_of` search, an
 * event about it): its source and creation time while it exists; once deleted, the creation time
 * of its first version (created with it) and no source. Null: nothing is left of it in the workspace.
 */
export async function documentFacts(
  documents: Pick<DocumentStore, 'getDocument' | 'getVersion'>,
  workspaceId: string,
  documentId: string,
): Promise<{ source: string | null; createdAt: string } | null> {
  if (!isDocumentId(documentId)) return null;
  const doc = await documents.getDocument(workspaceId, documentId);
  if (doc) return { source: doc.source, createdAt: doc.createdAt };
  const first = await documents.getVersion(documentId, 1);
  return first && first.workspaceId === workspaceId ? { source: null, createdAt: first.createdAt } : null;
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
