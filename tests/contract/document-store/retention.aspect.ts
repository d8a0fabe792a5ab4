import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, ids, newWorkspace } from './fixtures.ts';

/** Retention (expired versions, archiving, horizon), workspaces, status counts and ping. */
export function retentionAspect(suite: ContractContext): void {
  const { store, createDoc, servedDoc, addVersion, keyword } = suite;
  describe('retention', () => {
    it('lists versions no longer served before the cutoff, archives them and reports the horizon', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['glacier report'], { servedAt: at(10) });
      await addVersion(doc, ['glacier report revised'], { completeAt: at(20) });
      expect(await store.listExpiredVersions(workspaceId, at(20))).toEqual([]);
      const expired = await store.listExpiredVersions(workspaceId, at(21));
      expect(expired.map((version) => [version.documentId, version.version])).toEqual([[doc.id, 1]]);
      expect(await store.listExpiredVersions(newWorkspace(), at(21))).toEqual([]);
      expect(await store.archivedHorizon(workspaceId)).toBeNull();

      await store.archiveVersion(doc.id, 1, at(30));
      expect(await store.getVersion(doc.id, 1)).toMatchObject({ archivedAt: at(30), servedUntil: at(20) });
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(0);
      expect(await store.listExpiredVersions(workspaceId, at(21))).toEqual([]);
      expect(await store.archivedHorizon(workspaceId)).toBe(at(20));
      expect(await keyword(workspaceId, 'glacier', { asOf: at(15) })).toEqual([]);
      expect(ids(await keyword(workspaceId, 'glacier'))).toEqual([`${doc.id}:2:0`]);

      await store.archiveVersion(doc.id, 1, at(40));
      expect((await store.getVersion(doc.id, 1))?.archivedAt).toBe(at(30));
      expect(await store.archivedHorizon(workspaceId)).toBe(at(20));
    });

    it('counts a deleted document’s last served version as expired', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['iceberg'], { servedAt: at(10) });
      await store.softDelete(workspaceId, doc.id, at(25));
      expect(await store.listExpiredVersions(workspaceId, at(25))).toEqual([]);
      expect((await store.listExpiredVersions(workspaceId, at(26))).map((version) => version.version)).toEqual([1]);
    });

    it('lists the workspaces that hold documents', async () => {
      const workspaceId = newWorkspace();
      const unused = newWorkspace();
      await createDoc(workspaceId);
      const workspaces = await store.listWorkspaces();
      expect(workspaces).toContain(workspaceId);
      expect(workspaces).not.toContain(unused);
    });

    it('counts documents not deleted by their latest status, over every workspace', async () => {
      const before = await store.countDocumentsByStatus();
      await createDoc(newWorkspace());
      await servedDoc(newWorkspace(), ['counted once']);
      const deletedIn = newWorkspace();
      const deleted = await servedDoc(deletedIn, ['deleted, not counted']);
      await store.softDelete(deletedIn, deleted.id, at(30));
      const after = await store.countDocumentsByStatus();
      expect(Object.keys(after).sort()).toEqual(['completed', 'failed', 'pending', 'processing']);
      expect(after.pending - before.pending).toBe(1);
      expect(after.completed - before.completed).toBe(1);
      expect(after.failed - before.failed).toBe(0);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
