import { KbError } from '../errors/kb-error.ts';
import type { VersionRecord } from '../model/document-records.model.ts';
import type { CompareView, RollbackView, VersionDetailView, VersionView } from '../model/response-views.model.ts';
import { diffChunks } from './chunk-diff.ts';
import { allChunks, canSee, documentNotFound, isDocumentId, loadDocument, loadVersion } from './document-access.ts';
import { versionDetailView, versionView } from './document-views.ts';
import type { RequestContext } from './request-context.ts';
import { createVersionWriter, newVersionFrom, type VersionWriterDeps } from './version-writes.ts';

export interface VersionsService {
  /** Every version of the document, newest first. */
  history(ctx: RequestContext, documentId: string): Promise<{ document_id: string; versions: VersionView[] }>;
  version(ctx: RequestContext, documentId: string, version: number): Promise<VersionDetailView>;
  compare(ctx: RequestContext, documentId: string, from: number, to: number): Promise<CompareView>;
  rollback(ctx: RequestContext, documentId: string, targetVersion: number): Promise<RollbackView>;
}

/**
 * Versions of a document: their history, one version, the chunk diff of two completed versions,
 * and rollback. Rollback never rewrites history: it appends version M+1 with the target's
 * content and metadata (served at once from the target's chunks when they are all there, else
 * ingested again) and audits it; rolling back to the current version is a `conflict`.
 */
export function createVersionsService(deps: VersionWriterDeps): VersionsService {
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

    async rollback(ctx, documentId, targetVersion) {
      const doc = await loadDocument(documents, ctx, documentId);
      const target = await loadVersion(documents, ctx, documentId, targetVersion);
      const current = () => new KbError('conflict', `Version ${targetVersion} is already the current version.`);
      if (targetVersion === doc.latestVersion) throw current();
      let before: VersionRecord | null = null;
      const changeReason = `rollback to version ${targetVersion}`;
      const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
        if (latest.version === targetVersion) throw current();
        before = latest;
        return newVersionFrom(target, ctx, { metadata: target.metadata, changeReason, restoredFrom: targetVersion });
      });
      const completed = await writer.completeFromExisting(target, created);
      if (!completed) await writer.publishUploaded(ctx, created);
      await writer.audit(ctx, 'rollback', documentId, created.version, before, created, changeReason);
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
