import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, newVersion, newWorkspace } from './fixtures.ts';

/** Changes found by the write key their request stored with them (`findWrite`). */
export function recordedWritesAspect(suite: ContractContext): void {
  const { store, createDoc } = suite;
  describe('changes found by their write key', () => {
    it('finds the version a creation or an append stored with a key, in its workspace only', async () => {
      const workspaceId = newWorkspace();
      const [createKey, appendKey] = [randomUUID(), randomUUID()];
      const doc = await createDoc(workspaceId, { writeKey: createKey });
      // The key is the store's, not part of the record.
      expect(doc.latest).not.toHaveProperty('writeKey');
      expect(await store.findWrite(workspaceId, createKey)).toEqual({
        kind: 'version',
        documentId: doc.id,
        version: 1,
      });

      const appended = await store.appendVersion(workspaceId, doc.id, () =>
        newVersion({ createdAt: at(2), writeKey: appendKey }),
      );
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ createdAt: at(3) }));
      expect(appended.version).toBe(2);
      expect(await store.findWrite(workspaceId, appendKey)).toEqual({
        kind: 'version',
        documentId: doc.id,
        version: 2,
      });
      expect(await store.findWrite(workspaceId, createKey)).toEqual({
        kind: 'version',
        documentId: doc.id,
        version: 1,
      });

      expect(await store.findWrite(newWorkspace(), appendKey)).toBeNull();
      expect(await store.findWrite(workspaceId, randomUUID())).toBeNull();
      // Another document of the workspace without keys changes nothing.
      await createDoc(workspaceId);
      expect(await store.findWrite(workspaceId, appendKey)).toMatchObject({ documentId: doc.id, version: 2 });
    });

    it('finds a deletion by its key; deleting again keeps the first deletion’s key', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ createdAt: at(2) }));
      const [deleteKey, againKey] = [randomUUID(), randomUUID()];
      expect(await store.softDelete(workspaceId, doc.id, at(5), deleteKey)).toMatchObject({ deletedAt: at(5) });
      expect(await store.findWrite(workspaceId, deleteKey)).toEqual({
        kind: 'deletion',
        documentId: doc.id,
        version: 2,
      });
      expect(await store.softDelete(workspaceId, doc.id, at(6), againKey)).toMatchObject({ deletedAt: at(5) });
      expect(await store.findWrite(workspaceId, againKey)).toBeNull();
      expect(await store.findWrite(workspaceId, deleteKey)).toMatchObject({ kind: 'deletion', documentId: doc.id });
      expect(await store.findWrite(newWorkspace(), deleteKey)).toBeNull();
    });

    it('finds nothing of a purged document', async () => {
      const workspaceId = newWorkspace();
      const key = randomUUID();
      const doc = await createDoc(workspaceId, { writeKey: key });
      expect(await store.purge(workspaceId, doc.id)).toBe(true);
      expect(await store.findWrite(workspaceId, key)).toBeNull();
    });
  });
}
