import { documentNotification, publishNotification } from '../events/notifications.ts';
import type { DocumentRecord, Metadata, VersionRecord } from '../model/document-records.model.ts';
import type { DocumentView, UploadView } from '../model/response-views.model.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { isoNow } from '../util/time.ts';
import { documentNotFound, isDocumentId, loadDocument } from './document-access.ts';
import { documentView } from './document-views.ts';
import type { RequestContext } from './request-context.ts';
import type { StagedUpload } from './upload-staging.service.ts';
import { createVersionWriter, newVersionFrom, type VersionWriterDeps } from './version-writes.ts';

export interface DocumentWritesService {
  /**
   * A new document whose version 1 is the staged file, queued for ingestion. Whatever fails, the
   * staged file is removed and nothing of the document is left.
   */
  create(
    ctx: RequestContext,
    input: {
      staged: StagedUpload;
      metadata: Metadata;
      source: string;
      /** The item within `source` the document is created for (a relative path, an object key). */
      sourceItem?: string;
      changeReason: string | null;
    },
  ): Promise<UploadView>;
  /**
   * PUT: new content → version M+1, re-ingested. `metadata` undefined keeps the current metadata.
   * Whatever fails, the staged file is removed.
   */
  replaceContent(
    ctx: RequestContext,
    documentId: string,
    input: { staged: StagedUpload; metadata?: Metadata; changeReason: string | null },
  ): Promise<DocumentView>;
  /** PATCH: same content, new metadata → version M+1 without re-embedding. */
  patchMetadata(
    ctx: RequestContext,
    documentId: string,
    input: { metadata: Metadata; changeReason: string | null },
  ): Promise<DocumentView>;
  remove(ctx: RequestContext, documentId: string, options: { purge: boolean }): Promise<void>;
  reprocess(ctx: RequestContext, documentId: string): Promise<DocumentView>;
}

/**
 * Document writes: create, new content, new metadata, delete or purge, reprocess. Each write of
 * a version appends exactly one version (M+1, whatever was written concurrently), publishes its
 * `uploaded` event unless the version can be served from an unchanged one's chunks, audits the
 * change, and answers with the document as that write left it.
 */
export function createDocumentWritesService(
  deps: VersionWriterDeps & {
    /** Runs a write that frees space so that it succeeds on a full disk too (the embedded runtime's reserve). */
    readonly freeing?: <T>(write: () => Promise<T>) => Promise<T>;
  },
): DocumentWritesService {
  const { documents, objects } = deps;
  const freeing = deps.freeing ?? (<T>(write: () => Promise<T>) => write());
  const writer = createVersionWriter(deps);

  /**
   * Runs a write of a staged file; when it fails, the staged file goes too, unless the write had
   * recorded a version of it by then (it calls `referenced`): that version still needs its file.
   */
  async function discardingOnFailure<T>(
    staged: StagedUpload,
    write: (referenced: () => void) => Promise<T>,
  ): Promise<T> {
    let kept = false;
    try {
      return await write(() => {
        kept = true;
      });
    } catch (error) {
      if (!kept) await objects.delete(staged.storageKey).catch(() => {});
      throw error;
    }
  }

  /**
   * The document as a write left it: the version that write created, even when a concurrent
   * write has already appended a newer one (its response must still say `version` = M+1).
   */
  async function viewAt(ctx: RequestContext, documentId: string, version: number) {
    const doc = await loadDocument(documents, ctx, documentId);
    const record = version === doc.latestVersion ? doc.latest : await documents.getVersion(documentId, version);
    return documentView(record ? { ...doc, latestVersion: version, latest: record } : doc, objects);
  }

  async function createDocument(
    ctx: RequestContext,
    { staged, metadata, source, sourceItem, changeReason }: Parameters<DocumentWritesService['create']>[1],
  ): Promise<UploadView> {
    const doc: DocumentRecord = await documents.createDocument({
      id: staged.documentId,
      workspaceId: ctx.workspaceId,
      source,
      ...(sourceItem !== undefined ? { sourceItem } : {}),
      firstVersion: newVersionFrom(staged, ctx, { metadata, changeReason }),
    });
    try {
      await writer.publishUploaded(ctx, doc.latest);
    } catch (error) {
      // Nothing half-written: without its event the document would stay pending forever.
      await documents.purge(ctx.workspaceId, doc.id).catch(() => {});
      await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, doc.id)).catch(() => {});
      throw error;
    }
    await writer.audit(ctx, 'create', doc.id, 1, null, doc.latest, changeReason);
    return {
      document_id: doc.id,
      name: doc.latest.name,
      workspace_id: doc.workspaceId,
      storage_url: objects.url(staged.storageKey),
      mime_type: doc.latest.mimeType,
      size_bytes: doc.latest.sizeBytes,
      content_hash: doc.latest.contentHash,
      status: 'pending',
      version: 1,
      message: 'Document uploaded and queued for processing.',
    };
  }

  async function replaceContent(
    ctx: RequestContext,
    documentId: string,
    { staged, metadata, changeReason }: Parameters<DocumentWritesService['replaceContent']>[2],
    referenced: () => void,
  ): Promise<DocumentView> {
    await loadDocument(documents, ctx, documentId);
    let before: VersionRecord | null = null;
    const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
      before = latest;
      return newVersionFrom(staged, ctx, { metadata: metadata ?? latest.metadata, changeReason });
    });
    // Recorded: should the event not be published now, the version keeps its file and is queued
    // again by the check for versions left pending without their event.
    referenced();
    await writer.publishUploaded(ctx, created);
    await writer.audit(ctx, 'update', documentId, created.version, before, created, changeReason);
    return viewAt(ctx, documentId, created.version);
  }

  return {
    create: (ctx, input) => discardingOnFailure(input.staged, () => createDocument(ctx, input)),

    replaceContent: (ctx, documentId, input) =>
      discardingOnFailure(input.staged, (referenced) => replaceContent(ctx, documentId, input, referenced)),

    async patchMetadata(ctx, documentId, { metadata, changeReason }) {
      await loadDocument(documents, ctx, documentId);
      let before: VersionRecord | null = null;
      const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
        before = latest;
        return newVersionFrom(latest, ctx, { metadata, changeReason });
      });
      const source = before as VersionRecord | null;
      if (!source || !(await writer.completeFromExisting(source, created))) {
        await writer.publishUploaded(ctx, created);
      }
      await writer.audit(ctx, 'update', documentId, created.version, source, created, changeReason);
      return viewAt(ctx, documentId, created.version);
    },

    async remove(ctx, documentId, { purge }) {
      if (!isDocumentId(documentId)) throw documentNotFound(documentId);
      if (purge) {
        const doc = await documents.getDocument(ctx.workspaceId, documentId);
        const versions = await documents.listVersions(ctx.workspaceId, documentId);
        const removed = await freeing(() => documents.purge(ctx.workspaceId, documentId));
        if (!removed) throw documentNotFound(documentId);
        await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, documentId));
        const latest = doc?.latest ?? versions[0] ?? null;
        await freeing(() => writer.audit(ctx, 'purge', documentId, latest?.version ?? null, latest, null, null));
        await publishNotification(
          deps.log,
          deps.topics.notification,
          documentNotification(
            'document.purged',
            { id: documentId, workspaceId: ctx.workspaceId, source: doc?.source ?? '' },
            latest,
          ),
        );
        return;
      }
      const now = isoNow();
      const deleted = await freeing(() => documents.softDelete(ctx.workspaceId, documentId, now));
      if (!deleted?.deletedAt) throw documentNotFound(documentId);
      const once = { at: deleted.deletedAt };
      const audit = () =>
        freeing(() => writer.audit(ctx, 'delete', documentId, deleted.latestVersion, deleted.latest, null, null, once));
      if (Date.parse(deleted.deletedAt) !== Date.parse(now)) {
        // Deleted before. A deletion interrupted before its audit entry (its process killed) was
        // finished by the store just now; its entry is written here, under the id the deletion
        // itself would have used, so a race between two of these leaves one.
        const entries = await deps.accountStore.listAudit({
          workspaceId: ctx.workspaceId,
          documentId,
          action: 'delete',
          limit: 1,
        });
        if (entries.entries.length === 0) await audit();
        throw documentNotFound(documentId);
      }
      await audit();
      await publishNotification(
        deps.log,
        deps.topics.notification,
        documentNotification('document.deleted', deleted, deleted.latest, deleted.deletedAt),
      );
    },

    async reprocess(ctx, documentId) {
      const doc = await loadDocument(documents, ctx, documentId);
      const latest = await documents.updateVersion(documentId, doc.latestVersion, { status: 'pending', error: null });
      if (!latest) throw documentNotFound(documentId);
      await writer.publishUploaded(ctx, latest);
      return viewAt(ctx, documentId, latest.version);
    },
  };
}
