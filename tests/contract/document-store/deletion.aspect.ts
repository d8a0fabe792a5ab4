import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, axis, FAR_FUTURE, ids, listIds, newWorkspace } from './fixtures.ts';

/** Soft delete and purge. */
export function deletionAspect(suite: ContractContext): void {
  const { store, createDoc, servedDoc, addVersion, keyword, nearest } = suite;
  describe('soft delete and purge', () => {
    it('hides a deleted document from get, list and current search; as-of before the deletion still sees it', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['nebula survey notes'], { vectors: [axis(3)], servedAt: at(10) });
      const keep = await createDoc(workspaceId);
      const deleted = await store.softDelete(workspaceId, doc.id, at(20));
      expect(deleted).toMatchObject({ id: doc.id, deletedAt: at(20), servedVersion: null });

      expect(await store.getDocument(workspaceId, doc.id)).toBeNull();
      const listed = await store.listDocuments({ workspaceId, limit: 10 });
      expect(listIds(listed.documents)).toEqual([keep.id]);
      expect(listed.total).toBe(1);
      expect(await keyword(workspaceId, 'nebula')).toEqual([]);
      expect(await nearest(workspaceId, axis(3))).toEqual([]);
      expect(await keyword(workspaceId, 'nebula', { asOf: FAR_FUTURE })).toEqual([]);

      expect(ids(await keyword(workspaceId, 'nebula', { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await nearest(workspaceId, axis(3), { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(await keyword(workspaceId, 'nebula', { asOf: at(20) })).toEqual([]);

      expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(20));
      expect((await store.listVersions(workspaceId, doc.id)).map((version) => version.version)).toEqual([1]);
      // A second deletion answers the first one (its time), and changes nothing.
      expect(await store.softDelete(workspaceId, doc.id, at(30))).toMatchObject({ id: doc.id, deletedAt: at(20) });
      expect(await store.getDocument(workspaceId, doc.id)).toBeNull();
      expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(20));
    });

    it('does not delete another workspace’s document', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      expect(await store.softDelete(newWorkspace(), doc.id, at(5))).toBeNull();
      expect(await store.softDelete(workspaceId, randomUUID(), at(5))).toBeNull();
      expect(await store.purge(newWorkspace(), doc.id)).toBe(false);
      expect(await store.getDocument(workspaceId, doc.id)).toEqual(doc);
    });

    it('purges a document, its versions and chunks from everything', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['comet trajectory'], { vectors: [axis(4)], servedAt: at(10) });
      await addVersion(doc, ['comet revised trajectory'], { completeAt: at(20), vectors: [axis(5)] });
      expect(await store.purge(workspaceId, doc.id)).toBe(true);

      expect(await store.getDocument(workspaceId, doc.id)).toBeNull();
      expect(await store.listVersions(workspaceId, doc.id)).toEqual([]);
      expect(await store.getVersion(doc.id, 1)).toBeNull();
      expect(await store.getChunk(`${doc.id}:2:0`)).toBeNull();
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(0);
      expect(await keyword(workspaceId, 'comet')).toEqual([]);
      expect(await keyword(workspaceId, 'comet', { asOf: at(15) })).toEqual([]);
      expect(await nearest(workspaceId, axis(4), { asOf: at(15) })).toEqual([]);
      expect((await store.listDocuments({ workspaceId, limit: 10 })).total).toBe(0);
      expect(await store.purge(workspaceId, doc.id)).toBe(false);
    });

    it('purges a soft-deleted document', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['meteor shower'], { servedAt: at(10) });
      await store.softDelete(workspaceId, doc.id, at(20));
      expect(await store.purge(workspaceId, doc.id)).toBe(true);
      expect(await store.getVersion(doc.id, 1)).toBeNull();
      expect(await keyword(workspaceId, 'meteor', { asOf: at(15) })).toEqual([]);
    });
  });
}
