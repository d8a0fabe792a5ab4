import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../../core/model/document-records.model.ts';
import type { DocumentStore, PendingNotification } from '../../../core/ports/document-store/document-store.port.ts';
import type { ContractContext } from './context.ts';
import { at, newVersion, newWorkspace } from './fixtures.ts';

/** The pending notifications of the given documents, in the order the store lists them. */
async function pendingOf(store: DocumentStore, documentIds: readonly string[]): Promise<PendingNotification[]> {
  const all = await store.listPendingNotifications(10_000);
  return all.filter((pending) => documentIds.includes(pending.documentId));
}

/** A draft that records what it was shown and answers a notification of it under a fresh id. */
function recordingDraft() {
  const seen: DocumentRecord[] = [];
  let last: { id: string; body: string } | undefined;
  return {
    seen,
    last: () => last,
    draft: (changed: DocumentRecord) => {
      seen.push(changed);
      last = {
        id: randomUUID(),
        body: JSON.stringify({ type: 'document.deleted', document: changed.id, version: changed.latestVersion }),
      };
      return last;
    },
  };
}

/** Notifications recorded with a deletion and kept until cleared (`NotificationOutbox`). */
export function notificationOutboxAspect(suite: ContractContext): void {
  const { store, createDoc } = suite;
  describe('notifications pending with their change', () => {
    it('records the notification with the deletion, lists it as recorded until it is cleared', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ createdAt: at(2) }));
      const { draft, seen, last } = recordingDraft();
      const deleted = await store.softDelete(workspaceId, doc.id, at(5), randomUUID(), draft);
      expect(deleted).toMatchObject({ id: doc.id, deletedAt: at(5) });
      // The draft is made from the document as the deletion leaves it.
      expect(seen.at(-1)).toMatchObject({ id: doc.id, workspaceId, deletedAt: at(5), latestVersion: 2 });
      const recorded = last();
      expect(recorded).toBeDefined();
      const expected: PendingNotification = {
        id: recorded?.id ?? '',
        workspaceId,
        documentId: doc.id,
        recordedAt: at(5),
        body: recorded?.body ?? '',
      };
      expect(await pendingOf(store, [doc.id])).toEqual([expected]);
      // Listed again until cleared: a drain that failed to publish finds it next time.
      expect(await pendingOf(store, [doc.id])).toEqual([expected]);

      // Another id (a notification since replaced) clears nothing.
      await store.clearNotification(doc.id, randomUUID());
      expect(await pendingOf(store, [doc.id])).toEqual([expected]);
      await store.clearNotification(doc.id, expected.id);
      expect(await pendingOf(store, [doc.id])).toEqual([]);
      // Idempotent, also for a document that does not exist.
      await store.clearNotification(doc.id, expected.id);
      await store.clearNotification(randomUUID(), expected.id);
      expect(await pendingOf(store, [doc.id])).toEqual([]);
      // The deletion itself stays as it was.
      expect(await store.softDelete(workspaceId, doc.id, at(9))).toMatchObject({ deletedAt: at(5) });
    });

    it('records nothing for a deletion made before, nor without a draft', async () => {
      const workspaceId = newWorkspace();
      const [first, plain] = [await createDoc(workspaceId), await createDoc(workspaceId)];
      const once = recordingDraft();
      await store.softDelete(workspaceId, first.id, at(5), undefined, once.draft);
      const again = recordingDraft();
      expect(await store.softDelete(workspaceId, first.id, at(6), undefined, again.draft)).toMatchObject({
        deletedAt: at(5),
      });
      expect(again.seen).toEqual([]);
      expect((await pendingOf(store, [first.id])).map((pending) => pending.id)).toEqual([once.last()?.id]);

      await store.softDelete(workspaceId, plain.id, at(5));
      expect(await pendingOf(store, [plain.id])).toEqual([]);
      // Another workspace's document is not deleted: nothing recorded, the draft not called.
      const other = recordingDraft();
      const foreign = await createDoc(newWorkspace());
      expect(await store.softDelete(workspaceId, foreign.id, at(5), undefined, other.draft)).toBeNull();
      expect(other.seen).toEqual([]);
      expect(await pendingOf(store, [foreign.id])).toEqual([]);
      await store.clearNotification(first.id, once.last()?.id ?? '');
    });

    it('lists oldest first, at most the limit, and to another instance on the same storage', async () => {
      const workspaceId = newWorkspace();
      const docs = [await createDoc(workspaceId), await createDoc(workspaceId), await createDoc(workspaceId)];
      const drafts = docs.map(() => recordingDraft());
      // Deleted in another order than their instants.
      for (const [position, minutes] of [
        [1, 30],
        [0, 20],
        [2, 10],
      ] as const) {
        await store.softDelete(workspaceId, docs[position]?.id ?? '', at(minutes), undefined, drafts[position]?.draft);
      }
      const ids = docs.map((doc) => doc.id);
      const listed = await pendingOf(store, ids);
      expect(listed.map((pending) => pending.documentId)).toEqual([docs[2]?.id, docs[0]?.id, docs[1]?.id]);
      expect(listed.map((pending) => pending.recordedAt)).toEqual([at(10), at(20), at(30)]);
      expect(listed.map((pending) => pending.id)).toEqual([
        drafts[2]?.last()?.id,
        drafts[0]?.last()?.id,
        drafts[1]?.last()?.id,
      ]);

      expect(await store.listPendingNotifications(0)).toEqual([]);
      const one = await store.listPendingNotifications(1);
      expect(one).toHaveLength(1);

      const second = suite.harness?.second?.store;
      if (second !== undefined) {
        expect((await pendingOf(second, ids)).map((pending) => pending.id)).toEqual(listed.map((p) => p.id));
        // Cleared through one instance, gone for the other.
        await second.clearNotification(docs[2]?.id ?? '', listed[0]?.id ?? '');
        expect((await pendingOf(store, ids)).map((pending) => pending.documentId)).toEqual([docs[0]?.id, docs[1]?.id]);
      }
      for (const pending of await pendingOf(store, ids)) await store.clearNotification(pending.documentId, pending.id);
      expect(await pendingOf(store, ids)).toEqual([]);
    });

    it('keeps a purge’s notification, and the one its document held, after the document is gone', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ createdAt: at(2) }));
      const deletion = recordingDraft();
      await store.softDelete(workspaceId, doc.id, at(5), undefined, deletion.draft);
      const purge = recordingDraft();
      expect(await store.purge(workspaceId, doc.id, purge.draft)).toBe(true);
      expect(await store.getVersion(doc.id, 1)).toBeNull();
      // Made from the document as it was: deleted, with its latest version.
      expect(purge.seen).toHaveLength(1);
      expect(purge.seen[0]).toMatchObject({ id: doc.id, workspaceId, deletedAt: at(5), latestVersion: 2 });
      const listed = await pendingOf(store, [doc.id]);
      expect(listed.map((pending) => [pending.id, pending.body])).toEqual([
        [deletion.last()?.id, deletion.last()?.body],
        [purge.last()?.id, purge.last()?.body],
      ]);
      expect(listed.every((pending) => pending.workspaceId === workspaceId)).toBe(true);
      expect(listed[0]?.recordedAt).toBe(at(5));

      // Each is cleared by its own id.
      await store.clearNotification(doc.id, purge.last()?.id ?? '');
      expect((await pendingOf(store, [doc.id])).map((pending) => pending.id)).toEqual([deletion.last()?.id]);
      await store.clearNotification(doc.id, deletion.last()?.id ?? '');
      await store.clearNotification(doc.id, deletion.last()?.id ?? '');
      expect(await pendingOf(store, [doc.id])).toEqual([]);

      // Nothing purged: nothing recorded, the draft not called.
      const none = recordingDraft();
      expect(await store.purge(workspaceId, doc.id, none.draft)).toBe(false);
      const foreign = await createDoc(newWorkspace());
      expect(await store.purge(workspaceId, foreign.id, none.draft)).toBe(false);
      expect(none.seen).toEqual([]);
      expect(await pendingOf(store, [doc.id, foreign.id])).toEqual([]);
    });

    it('a purge without a draft removes the pending notification of its document with it', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.softDelete(workspaceId, doc.id, at(5), undefined, recordingDraft().draft);
      expect(await pendingOf(store, [doc.id])).toHaveLength(1);
      expect(await store.purge(workspaceId, doc.id)).toBe(true);
      expect(await pendingOf(store, [doc.id])).toEqual([]);
    });
  });
}
