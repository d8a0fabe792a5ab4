/**
 * What every write of a document version shares: the new version's record, the `uploaded` event
 * that starts its ingestion, the audit entry, and serving a version from an existing one's
 * chunks and vectors when its content did not change.
 */
import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { DocumentUploaded, Topics } from '../events/events.ts';
import { notifyVersionCompleted } from '../events/notify-version.ts';
import { publishEvent } from '../events/publish-event.ts';
import type { AuditAction } from '../model/account-records.model.ts';
import type { Metadata, VersionRecord } from '../model/document-records.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { DocumentStore, NewVersion, RecordedWrite } from '../ports/document-store/document-store.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { isoNow } from '../util/time.ts';
import type { WriteKey } from './idempotency.service.ts';
import { actorOf, createdByOf, type RequestContext } from './request-context.ts';

/**
 * The audit entry id of one change: a UUIDv7 whose time is the change's instant (entries list in id
 * order) and whose other bits come from the change itself, so the same change always gets the same id.
 */
export function changeAuditId(at: string, documentId: string, action: AuditAction, version: number | null): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Date.parse(at), 0, 6);
  createHash('sha256')
    .update(`${documentId}\u0000${action}\u0000${version ?? ''}`)
    .digest()
    .copy(bytes, 6, 0, 10);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70; // version 7
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The `uploaded` event that sends version `v` through ingestion. */
export function uploadedEvent(v: VersionRecord, traceId: string): DocumentUploaded {
  return {
    event_id: uuidv7(),
    occurred_at: isoNow(),
    trace_id: traceId,
    document_id: v.documentId,
    workspace_id: v.workspaceId,
    version: v.version,
    storage_key: v.storageKey,
    mime_type: v.mimeType,
    size_bytes: v.sizeBytes,
    content_hash: v.contentHash,
    name: v.name,
  };
}

/** The stored file a version points at: a staged upload, or an existing version's. */
export type VersionContent = Pick<NewVersion, 'name' | 'mimeType' | 'sizeBytes' | 'contentHash' | 'storageKey'>;

/** A new version of `content`, created now by the caller (with the key of its request, if any). */
export function newVersionFrom(
  content: VersionContent,
  ctx: RequestContext,
  change: { metadata: Metadata; changeReason: string | null; restoredFrom?: number },
  write?: WriteKey,
): NewVersion {
  return {
    ...(write ? { writeKey: write.key } : {}),
    name: content.name,
    mimeType: content.mimeType,
    sizeBytes: content.sizeBytes,
    contentHash: content.contentHash,
    storageKey: content.storageKey,
    metadata: change.metadata,
    changeReason: change.changeReason,
    restoredFrom: change.restoredFrom ?? null,
    createdBy: createdByOf(ctx),
    createdAt: isoNow(),
  };
}

export interface VersionWriterDeps {
  readonly documents: DocumentStore;
  readonly objects: ObjectStore;
  readonly accountStore: AccountStore;
  readonly log: MessageLog;
  readonly topics: Topics;
}

export interface VersionWriter {
  /**
   * Appends an audit entry for a change of `documentId` by the caller, now; or, with `once`, at the
   * change's own instant under an id derived from it, so that appending it again (a retry that
   * finishes an interrupted change) leaves one entry.
   */
  audit(
    ctx: RequestContext,
    action: AuditAction,
    documentId: string,
    version: number | null,
    before: VersionRecord | null,
    after: VersionRecord | null,
    changeReason: string | null,
    once?: { readonly at: string },
  ): Promise<void>;
  /**
   * What an earlier request with the write's key (one cut off before it stored its answer)
   * already wrote, when the write resumes one: a version of `documentId` (of any document when
   * undefined: a creation), or a deletion of it. Null when the write does not resume one or
   * nothing was written.
   */
  findResumed(
    ctx: RequestContext,
    write: WriteKey | undefined,
    kind: RecordedWrite['kind'],
    documentId?: string,
  ): Promise<RecordedWrite | null>;
  /**
   * The audit entry of a new version, at its creation instant under an id derived from it: a
   * request that resumes one cut off writes it again and leaves one.
   */
  auditVersion(
    ctx: RequestContext,
    action: AuditAction,
    created: VersionRecord,
    before: VersionRecord | null,
    changeReason: string | null,
  ): Promise<void>;
  /** Publishes the `uploaded` event that sends the version through ingestion. */
  publishUploaded(ctx: RequestContext, version: VersionRecord): Promise<void>;
  /**
   * For a request that resumes a write an earlier one made: publishes the version's `uploaded`
   * event again while the version is still `pending` (the earlier request may have failed before
   * it published; a second event for a version already queued is ingested once).
   */
  requeueResumed(ctx: RequestContext, version: VersionRecord): Promise<void>;
  /**
   * Serves `target` from `source`'s chunks and vectors (metadata change, rollback) when they are
   * all there; returns false when the pipeline must run instead.
   */
  completeFromExisting(source: VersionRecord, target: VersionRecord): Promise<boolean>;
}

/**
 * The steps the document writes and rollback share. Promises an `uploaded` event keyed by the
 * document id (so one document's versions stay in order), one audit entry per call, and that
 * `completeFromExisting` either completes `target` with all of `source`'s chunks or reports false.
 */
export function createVersionWriter(deps: VersionWriterDeps): VersionWriter {
  const { documents, objects, accountStore, log, topics } = deps;
  const writer: VersionWriter = {
    async audit(ctx, action, documentId, version, before, after, changeReason, once) {
      await accountStore.appendAudit({
        id: once ? changeAuditId(once.at, documentId, action, version) : uuidv7(),
        action,
        workspaceId: ctx.workspaceId,
        documentId,
        actor: actorOf(ctx),
        timestamp: once?.at ?? isoNow(),
        version,
        before: before ? { version: before.version, metadata: before.metadata } : null,
        after: after ? { version: after.version, metadata: after.metadata } : null,
        changeReason,
        traceId: ctx.traceId,
      });
    },

    async findResumed(ctx, write, kind, documentId) {
      if (!write?.resumed) return null;
      const found = await documents.findWrite(ctx.workspaceId, write.key);
      if (found === null || found.kind !== kind) return null;
      return documentId === undefined || found.documentId === documentId ? found : null;
    },

    auditVersion: (ctx, action, created, before, changeReason) =>
      writer.audit(ctx, action, created.documentId, created.version, before, created, changeReason, {
        at: created.createdAt,
      }),

    async publishUploaded(ctx, v) {
      await publishEvent(log, topics.uploaded, v.documentId, uploadedEvent(v, ctx.traceId));
    },

    async requeueResumed(ctx, v) {
      if (v.status === 'pending') await writer.publishUploaded(ctx, v);
    },

    async completeFromExisting(source, target) {
      if (source.status !== 'completed' || source.archivedAt !== null || source.chunkCount === 0) return false;
      const model = await documents.getIndexModel();
      if (!model || source.embeddingModel !== model.model) return false;
      if (!(await documents.hasVectors(source.documentId, source.version))) return false;
      const parsedFrom = storageKeys.parsed(source.workspaceId, source.documentId, source.version);
      const parsedTo = storageKeys.parsed(target.workspaceId, target.documentId, target.version);
      if (!(await objects.stat(parsedFrom))) return false;
      await objects.put(parsedTo, await objects.get(parsedFrom), { contentType: 'application/json' });
      const copied = await documents.copyChunks(source.documentId, source.version, target.version);
      if (copied !== source.chunkCount) return false;
      const { completed } = await documents.completeVersion(target.documentId, target.version, {
        at: isoNow(),
        chunkCount: source.chunkCount,
        tokens: source.tokens,
        embeddingModel: source.embeddingModel,
      });
      await notifyVersionCompleted(
        { log, topic: topics.notification },
        { workspaceId: target.workspaceId, documentId: target.documentId, version: target.version },
        completed,
      );
      return true;
    },
  };
  return writer;
}
