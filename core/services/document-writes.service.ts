import { isRetriable } from '../errors/kb-error.ts';
import { isStorageFull } from '../errors/storage-errors.ts';
import { documentNotification } from '../events/notifications.ts';
import type { DocumentRecord, Metadata, VersionRecord } from '../model/document-records.model.ts';
import type { Logger } from '../model/logger.model.ts';
import { silentLogger } from '../model/logger.model.ts';
import type { DocumentView, UploadView } from '../model/response-views.model.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { isoNow } from '../util/time.ts';
import { documentNotFound, isDocumentId, loadDocument } from './document-access.ts';
import { documentView } from './document-views.ts';
import type { WriteKey } from './idempotency.service.ts';
import { createNotificationOutboxService, type NotificationOutboxService } from './notification-outbox.service.ts';
import { actorOf, type RequestContext } from './request-context.ts';
import type { StagedUpload } from './upload-staging.service.ts';
import { createVersionWriter, newVersionFrom, type VersionWriterDeps } from './version-writes.ts';

/**
 * Every write but reprocess takes the {@link WriteKey} of a request sent with an
 * `Idempotency-Key`: what it writes carries the key, and a write that resumes a request cut off
 * before it stored its answer first looks for what that request wrote; found, it finishes what
 * may have been left undone (the audit entry; a version still pending is queued again) and
 * answers as that request would have, writing nothing new (a staged file is discarded).
 */
export interface DocumentWritesService {
  /**
   * A new document whose version 1 is the staged file, queued for ingestion. Whatever fails, the
   * staged file is removed and nothing of the document is left, except when an engine failed to
   * answer: the write may have been applied, so the file stays for a retry with the request's key
   * (the leftovers sweep removes it if no version refers to it).
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
    write?: WriteKey,
  ): Promise<UploadView>;
  /**
   * PUT: new content → version M+1, re-ingested. `metadata` undefined keeps the current metadata.
   * Whatever fails, the staged file is removed.
   */
  replaceContent(
    ctx: RequestContext,
    documentId: string,
    input: { staged: StagedUpload; metadata?: Metadata; changeReason: string | null },
    write?: WriteKey,
  ): Promise<DocumentView>;
  /** PATCH: same content, new metadata → version M+1 without re-embedding. */
  patchMetadata(
    ctx: RequestContext,
    documentId: string,
    input: { metadata: Metadata; changeReason: string | null },
    write?: WriteKey,
  ): Promise<DocumentView>;
  /**
   * Deletes the document (or purges it). Once the deletion is written the answer is a success: its
   * `document.deleted` notification is recorded pending in the same store write as the deletion
   * and published from the outbox until the log takes it (see `notification-outbox.service.ts`),
   * by this process or, should it end first, by the next one that drains; it is not failed with
   * the request. A document already deleted is `not-found`, unless this request's key deleted it
   * (an earlier request with the key cut off, or answered a failure, after the deletion). A purge's
   * `document.purged` goes the same way: recorded pending by the purge (with the deletion's, if that
   * was still pending), published, and drained after a failure.
   */
  remove(ctx: RequestContext, documentId: string, options: { purge: boolean }, write?: WriteKey): Promise<void>;
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
    /** Where a notification published again after a failure is reported. */
    readonly logger?: Logger;
    /** The default outbox's first pause before a drain after a failed publish, doubling up to 30 s (default 1 s). */
    readonly notifyRetryMs?: number;
    /**
     * The outbox the notifications of deletions and purges are recorded in and published from
     * (default: one of this service's own over `documents`, `log` and the notification topic,
     * which drains only after a failure of its own).
     */
    readonly outbox?: NotificationOutboxService;
  },
): DocumentWritesService {
  const { documents, objects } = deps;
  const logger = deps.logger ?? silentLogger;
  const firstRetryMs = deps.notifyRetryMs ?? 1000;
  const outbox =
    deps.outbox ??
    createNotificationOutboxService({
      store: documents,
      log: deps.log,
      topic: deps.topics.notification,
      logger,
      retryMs: firstRetryMs,
    });

  const freeing = deps.freeing ?? (<T>(write: () => Promise<T>) => write());
  const writer = createVersionWriter(deps);

  /**
   * Runs a write of a staged file; when it fails, the staged file goes too, unless the write had
   * recorded a version of it by then (it calls `referenced`): that version still needs its file.
   * An engine that failed to answer (unavailable, reset, timed out) may have applied the write
   * all the same, and a retry with the request's key then answers that version: the file is kept,
   * and the leftovers sweep removes it later if no version refers to it.
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
      const mayBeApplied = isRetriable(error) && !isStorageFull(error);
      if (!kept && !mayBeApplied) await objects.delete(staged.storageKey).catch(() => {});
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

  async function isDeletionOf(ctx: RequestContext, writeKey: string, documentId: string): Promise<boolean> {
    const found = await documents.findWrite(ctx.workspaceId, writeKey);
    return found?.kind === 'deletion' && found.documentId === documentId;
  }

  /** The answer of a creation: the new document's version 1, queued. */
  function uploadView(doc: DocumentRecord, first: VersionRecord): UploadView {
    return {
      document_id: doc.id,
      name: first.name,
      workspace_id: doc.workspaceId,
      storage_url: objects.url(first.storageKey),
      mime_type: first.mimeType,
      size_bytes: first.sizeBytes,
      content_hash: first.contentHash,
      status: 'pending',
      version: 1,
      message: 'Document uploaded and queued for processing.',
    };
  }

  /**
   * The answer of a creation an earlier request with the key made, its audit entry written if it
   * was not; null when there is none (or its document is gone since).
   */
  async function resumedCreation(ctx: RequestContext, write: WriteKey | undefined): Promise<UploadView | null> {
    const found = await writer.findResumed(ctx, write, 'version');
    if (found === null) return null;
    const doc = await documents.getDocument(ctx.workspaceId, found.documentId);
    const first = await documents.getVersion(found.documentId, 1);
    if (doc === null || first === null) return null;
    await writer.requeueResumed(ctx, first);
    await writer.auditVersion(ctx, 'create', first, null, first.changeReason);
    return uploadView(doc, first);
  }

  async function createDocument(
    ctx: RequestContext,
    { staged, metadata, source, sourceItem, changeReason }: Parameters<DocumentWritesService['create']>[1],
    write: WriteKey | undefined,
  ): Promise<UploadView> {
    const resumed = await resumedCreation(ctx, write);
    if (resumed !== null) {
      await objects.delete(staged.storageKey);
      return resumed;
    }
    const doc: DocumentRecord = await documents.createDocument({
      id: staged.documentId,
      workspaceId: ctx.workspaceId,
      source,
      ...(sourceItem !== undefined ? { sourceItem } : {}),
      firstVersion: newVersionFrom(staged, ctx, { metadata, changeReason }, write),
    });
    try {
      await writer.publishUploaded(ctx, doc.latest);
    } catch (error) {
      // Nothing half-written: without its event the document would stay pending forever. Its
      // files go only once it is gone: a document the purge could not remove is still answered to
      // a retry with the request's key, and queued again by the check for versions left pending.
      const purged = await documents.purge(ctx.workspaceId, doc.id).then(
        () => true,
        () => false,
      );
      if (purged) await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, doc.id)).catch(() => {});
      throw error;
    }
    await writer.auditVersion(ctx, 'create', doc.latest, null, changeReason);
    return uploadView(doc, doc.latest);
  }

  /**
   * The answer of a new version of `documentId` an earlier request with the key made, its audit
   * entry written if it was not; null when there is none.
   */
  async function resumedVersion(
    ctx: RequestContext,
    documentId: string,
    write: WriteKey | undefined,
  ): Promise<DocumentView | null> {
    const found = await writer.findResumed(ctx, write, 'version', documentId);
    if (found === null) return null;
    const created = await documents.getVersion(documentId, found.version);
    if (created === null) return null;
    await writer.requeueResumed(ctx, created);
    const before = await documents.getVersion(documentId, found.version - 1);
    await writer.auditVersion(ctx, 'update', created, before, created.changeReason);
    return viewAt(ctx, documentId, created.version);
  }

  async function replaceContent(
    ctx: RequestContext,
    documentId: string,
    { staged, metadata, changeReason }: Parameters<DocumentWritesService['replaceContent']>[2],
    referenced: () => void,
    write: WriteKey | undefined,
  ): Promise<DocumentView> {
    await loadDocument(documents, ctx, documentId);
    const resumed = await resumedVersion(ctx, documentId, write);
    if (resumed !== null) {
      await objects.delete(staged.storageKey);
      return resumed;
    }
    let before: VersionRecord | null = null;
    const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
      before = latest;
      return newVersionFrom(staged, ctx, { metadata: metadata ?? latest.metadata, changeReason }, write);
    });
    // Recorded: should the event not be published now, the version keeps its file and is queued
    // again by the check for versions left pending without their event.
    referenced();
    await writer.publishUploaded(ctx, created);
    await writer.auditVersion(ctx, 'update', created, before, changeReason);
    return viewAt(ctx, documentId, created.version);
  }

  return {
    create: (ctx, input, write) => discardingOnFailure(input.staged, () => createDocument(ctx, input, write)),

    replaceContent: (ctx, documentId, input, write) =>
      discardingOnFailure(input.staged, (referenced) => replaceContent(ctx, documentId, input, referenced, write)),

    async patchMetadata(ctx, documentId, { metadata, changeReason }, write) {
      await loadDocument(documents, ctx, documentId);
      const resumed = await resumedVersion(ctx, documentId, write);
      if (resumed !== null) return resumed;
      let before: VersionRecord | null = null;
      const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
        before = latest;
        return newVersionFrom(latest, ctx, { metadata, changeReason }, write);
      });
      const source = before as VersionRecord | null;
      if (!source || !(await writer.completeFromExisting(source, created))) {
        await writer.publishUploaded(ctx, created);
      }
      await writer.auditVersion(ctx, 'update', created, source, changeReason);
      return viewAt(ctx, documentId, created.version);
    },

    async remove(ctx, documentId, { purge }, write) {
      if (!isDocumentId(documentId)) throw documentNotFound(documentId);
      if (purge) {
        const doc = await documents.getDocument(ctx.workspaceId, documentId);
        const versions = await documents.listVersions(ctx.workspaceId, documentId);
        // Made from the document as it was, and kept pending by the purge where it leaves it.
        const notification = outbox.draft((purged) =>
          documentNotification('document.purged', purged, purged.latest, undefined, actorOf(ctx)),
        );
        try {
          const removed = await freeing(() => documents.purge(ctx.workspaceId, documentId, notification.draft));
          if (!removed) throw documentNotFound(documentId);
          await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, documentId));
          const latest = doc?.latest ?? versions[0] ?? null;
          await freeing(() => writer.audit(ctx, 'purge', documentId, latest?.version ?? null, latest, null, null));
          await notification.deliver(documentId);
        } finally {
          notification.release();
        }
        // The document's deletion notification, had it not been published yet, was kept with it.
        outbox.wake();
        return;
      }
      const now = isoNow();
      // The notification is made from the document as the deletion leaves it and recorded pending
      // in the deletion's own write: a process killed after the deletion leaves it to a drain.
      const notification = outbox.draft((changed) =>
        documentNotification('document.deleted', changed, changed.latest, changed.deletedAt ?? now, actorOf(ctx)),
      );
      try {
        const deleted = await freeing(() =>
          documents.softDelete(ctx.workspaceId, documentId, now, write?.key, notification.draft),
        );
        if (!deleted?.deletedAt) throw documentNotFound(documentId);
        const once = { at: deleted.deletedAt };
        const audit = () =>
          freeing(() =>
            writer.audit(ctx, 'delete', documentId, deleted.latestVersion, deleted.latest, null, null, once),
          );
        // Deleted before, by this request's key: an earlier request with it was cut off, or answered a
        // failure, after the deletion. Its work is finished here and answered as it would have been.
        const ours =
          Date.parse(deleted.deletedAt) !== Date.parse(now) &&
          write !== undefined &&
          (await isDeletionOf(ctx, write.key, documentId));
        if (!ours && Date.parse(deleted.deletedAt) !== Date.parse(now)) {
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
        // Recorded by this call: published now. Deleted by an earlier request with this key: its
        // notification, if still pending, is the outbox's to publish, under its own id.
        await notification.deliver(documentId);
      } finally {
        notification.release();
      }
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
