import { KbError } from '../errors/kb-error.ts';
import type { VersionRecord } from '../model/document-records.model.ts';
import type { CompareView, RollbackView, VersionDetailView, VersionView } from '../model/response-views.model.ts';
import { diffChunks } from './chunk-diff.ts';
import { allChunks, canSee, documentNotFound, isDocumentId, loadDocument, loadVersion } from './document-access.ts';
import { versionDetailView, versionView } from './document-views.ts';
import type { WriteKey } from './idempotency.service.ts';
import type { IngestionBacklogService } from './ingestion-backlog.service.ts';
import type { RequestContext } from './request-context.ts';
import { createVersionWriter, newVersionFrom, type VersionWriterDeps } from './version-writes.ts';

export interface VersionsService {
  /** Every version of the document, newest first. */
  history(ctx: RequestContext, documentId: string): Promise<{ document_id: string; versions: VersionView[] }>;
  version(ctx: RequestContext, documentId: string, version: number): Promise<VersionDetailView>;
  compare(ctx: RequestContext, documentId: string, from: number, to: number): Promise<CompareView>;
  /**
   * With the {@link WriteKey} of a request sent with an `Idempotency-Key`, the new version carries
   * it, and a rollback that resumes a request cut off before it stored its answer answers with the
   * version that request created, if it did, instead of creating another.
   */
  rollback(ctx: RequestContext, documentId: string, targetVersion: number, write?: WriteKey): Promise<RollbackView>;
}

/**
 * Versions of a document: their history, one version, the chunk diff of two completed versions,
 * and rollback. Rollback never rewrites history: it appends version M+1 with the target's
 * content and metadata (served at once from the target's chunks when they are all there, else
 * ingested again) and audits it; rolling back to the current version is a `conflict`.
 */
/**
 * Whether a rollback to `target` can be served from its chunks without ingestion (what
 * `completeFromExisting` checks first; it may still find the chunks or the model lacking).
 */
const servableAsIs = (target: VersionRecord) =>
  target.status === 'completed' && target.archivedAt === null && target.chunkCount > 0;

export function createVersionsService(
  deps: VersionWriterDeps & {
    /** Admits a rollback that must be ingested again while the backlog has room (none: always). */
    readonly backlog?: Pick<IngestionBacklogService, 'admit'>;
  },
): VersionsService {
  const { documents, objects } = deps;
  const writer = createVersionWriter(deps);
  return {
    async history(ctx, documentId) {
      if (ctx.scope) {
        // A scoped caller sees the versions its rules let through; none: the document does not exist for it.
        const doc = isDocumentId(documentId) ? await documents.getDocument(ctx.workspaceId, documentId) : null;
        const versions = doc ? await documents.listVersions(ctx.workspaceId, documentId) : [];
        const visible = doc ? versions.filter((v) => canSee(ctx, doc, v)) : [];
        if (visible.length === 0) throw documentNotFound(documentId);
        return { document_id: documentId, versions: visible.map(versionView) };
      }
      await loadDocument(documents, ctx, documentId);
      const versions = await documents.listVersions(ctx.workspaceId, documentId);
      return { document_id: documentId, versions: versions.map(versionView) };
    },

    async version(ctx, documentId, version) {
      return versionDetailView(await loadVersion(documents, ctx, documentId, version), objects);
    },

    async compare(ctx, documentId, from, to) {
      const [a, b] = [
        await loadVersion(documents, ctx, documentId, from),
        await loadVersion(documents, ctx, documentId, to),
      ];
      for (const v of [a, b]) {
        if (v.archivedAt !== null) {
          throw new KbError('conflict', `Version ${v.version} is archived; its chunks are no longer indexed.`);
        }
        if (v.status !== 'completed') {
          throw new KbError('conflict', `Version ${v.version} is ${v.status}; versions compare once completed.`);
        }
      }
      const { diff, unchanged } = diffChunks(
        await allChunks(documents, documentId, from),
        await allChunks(documents, documentId, to),
      );
      return {
        document_id: documentId,
        from_version: from,
        to_version: to,
        changes: {
          added_chunks: diff.filter((d) => d.type === 'added').length,
          removed_chunks: diff.filter((d) => d.type === 'removed').length,
          modified_chunks: diff.filter((d) => d.type === 'modified').length,
          unchanged_chunks: unchanged,
          diff,
        },
      };
    },

    async rollback(ctx, documentId, targetVersion, write) {
      const doc = await loadDocument(documents, ctx, documentId);
      const changeReason = `rollback to version ${targetVersion}`;
      const resumed = await writer.findResumed(ctx, write, 'version', documentId);
      const earlier = resumed === null ? null : await documents.getVersion(documentId, resumed.version);
      if (earlier !== null) {
        await writer.requeueResumed(ctx, earlier);
        const before = await documents.getVersion(documentId, earlier.version - 1);
        await writer.auditVersion(ctx, 'rollback', earlier, before, changeReason);
        return {
          document_id: documentId,
          version: earlier.version,
          restored_from: earlier.restoredFrom ?? targetVersion,
          status: earlier.status,
        };
      }
      const target = await loadVersion(documents, ctx, documentId, targetVersion);
      const current = () => new KbError('conflict', `Version ${targetVersion} is already the current version.`);
      if (targetVersion === doc.latestVersion) throw current();
      // A rollback that must be ingested again queues work like an upload: it waits for room.
      const ticket = servableAsIs(target) ? null : await deps.backlog?.admit(ctx.workspaceId);
      let before: VersionRecord | null = null;
      let created: VersionRecord;
      try {
        created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
          if (latest.version === targetVersion) throw current();
          before = latest;
          return newVersionFrom(
            target,
            ctx,
            { metadata: target.metadata, changeReason, restoredFrom: targetVersion },
            write,
          );
        });
        const completed = await writer.completeFromExisting(target, created);
        if (!completed) await writer.publishUploaded(ctx, created);
        if (!completed) ticket?.accepted();
      } finally {
        ticket?.release();
      }
      await writer.auditVersion(ctx, 'rollback', created, before, changeReason);
      const now = await documents.getVersion(documentId, created.version);
      return {
        document_id: documentId,
        version: created.version,
        restored_from: targetVersion,
        status: now?.status ?? created.status,
      };
    },
  };
}
