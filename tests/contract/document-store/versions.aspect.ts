import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, MODEL, newVersion, newWorkspace } from './fixtures.ts';

/** Version allocation (`appendVersion`) and completion with its served-time bookkeeping. */
export function versionsAspect(suite: ContractContext): void {
  const { store, createDoc, keyword } = suite;
  describe('appendVersion', () => {
    it('numbers versions from 1 without gaps and hands build the latest version', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId, { name: 'first.txt' });
      const seen: number[] = [];
      const second = await store.appendVersion(workspaceId, doc.id, (latest) => {
        seen.push(latest.version);
        return newVersion({ name: `${latest.name}+`, changeReason: 'typo', createdAt: at(5) });
      });
      expect(second).toMatchObject({
        documentId: doc.id,
        workspaceId,
        version: 2,
        status: 'pending',
        name: 'first.txt+',
        changeReason: 'typo',
        createdAt: at(5),
        servedFrom: null,
      });
      const third = await store.appendVersion(workspaceId, doc.id, (latest) => {
        seen.push(latest.version);
        return newVersion({ name: `${latest.name}+`, restoredFrom: 1 });
      });
      expect(third).toMatchObject({ version: 3, name: 'first.txt++', restoredFrom: 1 });
      expect(seen).toEqual([1, 2]);
      const reread = await store.getDocument(workspaceId, doc.id);
      expect(reread?.latestVersion).toBe(3);
      expect(reread?.latest).toEqual(third);
    });

    it('gives 20 concurrent appends distinct, gap-free version numbers', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          store.appendVersion(workspaceId, doc.id, () => newVersion({ name: `concurrent-${n}.txt` })),
        ),
      );
      const numbers = results.map((version) => version.version).sort((x, y) => x - y);
      expect(numbers).toEqual(Array.from({ length: 20 }, (_, n) => n + 2));
      expect((await store.listVersions(workspaceId, doc.id)).map((version) => version.version)).toEqual(
        Array.from({ length: 21 }, (_, n) => 21 - n),
      );
      expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(21);
    });

    it('rejects a missing, deleted or foreign document with not-found', async () => {
      const workspaceId = newWorkspace();
      const build = () => newVersion();
      await expect(store.appendVersion(workspaceId, randomUUID(), build)).rejects.toMatchObject({
        code: 'not-found',
      });
      const doc = await createDoc(workspaceId);
      await expect(store.appendVersion(newWorkspace(), doc.id, build)).rejects.toMatchObject({ code: 'not-found' });
      await store.softDelete(workspaceId, doc.id, at(5));
      await expect(store.appendVersion(workspaceId, doc.id, build)).rejects.toMatchObject({ code: 'not-found' });
      expect(await store.getVersion(doc.id, 2)).toBeNull();
    });

    it('allocates nothing when build throws', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await expect(
        store.appendVersion(workspaceId, doc.id, () => {
          throw new Error('metadata rejected');
        }),
      ).rejects.toThrow('metadata rejected');
      expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(1);
      expect((await store.appendVersion(workspaceId, doc.id, () => newVersion())).version).toBe(2);
    });
  });

  describe('completeVersion', () => {
    const result = (when: string, chunkCount = 3) => ({
      at: when,
      chunkCount,
      tokens: 42,
      embeddingModel: MODEL.model,
    });
    /** The answer of a completion: served or not, and the completed version as the store holds it. */
    const outcome = (served: boolean, completedAt: string) => ({
      served,
      completed: { name: expect.any(String), completedAt, source: 'upload' },
    });

    it('serves the first completed version from its completion instant', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId, { name: 'first.txt' });
      expect(await store.completeVersion(doc.id, 1, result(at(5)))).toEqual({
        served: true,
        completed: { name: 'first.txt', completedAt: at(5), source: 'upload' },
      });
      expect(await store.getVersion(doc.id, 1)).toMatchObject({
        status: 'completed',
        completedAt: at(5),
        servedFrom: at(5),
        servedUntil: null,
        chunkCount: 3,
        tokens: 42,
        embeddingModel: MODEL.model,
      });
      const reread = await store.getDocument(workspaceId, doc.id);
      expect(reread?.servedVersion).toBe(1);
      expect(reread?.latest.status).toBe('completed');
    });

    it('hands serving over to the next version at one instant', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.completeVersion(doc.id, 1, result(at(5)));
      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(1);
      expect(await store.completeVersion(doc.id, 2, result(at(9)))).toEqual(outcome(true, at(9)));
      const v1 = await store.getVersion(doc.id, 1);
      const v2 = await store.getVersion(doc.id, 2);
      expect(v1?.servedUntil).toBe(at(9));
      expect(v2?.servedFrom).toBe(at(9));
      expect(v2?.servedUntil).toBeNull();
      expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(2);
    });

    it('never makes an older version current on a stale completion', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.completeVersion(doc.id, 1, result(at(5)));
      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      expect(await store.completeVersion(doc.id, 3, result(at(8)))).toEqual(outcome(true, at(8)));
      expect(await store.completeVersion(doc.id, 2, result(at(9)))).toEqual(outcome(false, at(9)));
      expect(await store.getVersion(doc.id, 2)).toMatchObject({
        status: 'completed',
        servedFrom: null,
        servedUntil: null,
      });
      expect(await store.getVersion(doc.id, 3)).toMatchObject({ servedFrom: at(8), servedUntil: null });
      expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(8));
      expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(3);
    });

    it('changes nothing when a completion is repeated', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.completeVersion(doc.id, 1, result(at(5)));
      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      await store.completeVersion(doc.id, 3, result(at(8)));
      await store.completeVersion(doc.id, 2, result(at(9)));
      const before = await store.listVersions(workspaceId, doc.id);
      const documentBefore = await store.getDocument(workspaceId, doc.id);
      // The answer tells each version's first completion, as a read would.
      expect(await store.completeVersion(doc.id, 1, result(at(20), 99))).toEqual(outcome(true, at(5)));
      expect(await store.completeVersion(doc.id, 3, result(at(21), 99))).toEqual(outcome(true, at(8)));
      expect(await store.completeVersion(doc.id, 2, result(at(22), 99))).toEqual(outcome(false, at(9)));
      expect(await store.listVersions(workspaceId, doc.id)).toEqual(before);
      expect(await store.getDocument(workspaceId, doc.id)).toEqual(documentBefore);
    });

    it('does not serve a version that completes after the document was deleted', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.softDelete(workspaceId, doc.id, at(3));
      expect(await store.completeVersion(doc.id, 1, result(at(5)))).toEqual(outcome(false, at(5)));
      expect((await store.getVersion(doc.id, 1))?.servedFrom).toBeNull();
      expect(await keyword(workspaceId, 'anything', { asOf: at(6) })).toEqual([]);
    });

    it('answers a completion of a version that is gone with nothing completed', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      expect(await store.completeVersion(doc.id, 2, result(at(5)))).toEqual({ served: false, completed: null });
      await store.purge(workspaceId, doc.id);
      expect(await store.completeVersion(doc.id, 1, result(at(6)))).toEqual({ served: false, completed: null });
    });
  });
}
