import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { newVersion, newWorkspace } from './fixtures.ts';

/** Instants long before every other test's versions, so that only this aspect's versions are that old. */
const old = (second: number): string => new Date(Date.UTC(1971, 0, 1, 0, 0, second)).toISOString();

/** Versions whose ingestion has not started. */
export function pendingVersionsAspect(suite: ContractContext): void {
  const { store, createDoc } = suite;
  describe('pending versions', () => {
    it('lists pending versions created before an instant, of every workspace and document, oldest first', async () => {
      const first = await createDoc(newWorkspace(), { createdAt: old(10) });
      const second = await createDoc(newWorkspace(), { createdAt: old(20) });
      const started = await createDoc(newWorkspace(), { createdAt: old(5) });
      await store.updateVersion(started.id, 1, { status: 'processing' });
      // A later document, whose version 2 (not its latest's creation) is what counts.
      const later = await createDoc(newWorkspace(), { createdAt: old(40) });
      await store.appendVersion(later.workspaceId, later.id, () => newVersion({ createdAt: old(12) }));
      const deleted = await createDoc(newWorkspace(), { createdAt: old(15) });
      await store.softDelete(deleted.workspaceId, deleted.id, old(16));

      const listed = async (before: string, limit = 10) =>
        (await store.listPendingVersions(before, limit)).map((v) => [v.documentId, v.version, v.status]);
      expect(await listed(old(10))).toEqual([]);
      expect(await listed(old(21))).toEqual([
        [first.id, 1, 'pending'],
        [later.id, 2, 'pending'],
        [deleted.id, 1, 'pending'],
        [second.id, 1, 'pending'],
      ]);
      expect(await listed(old(21), 2)).toEqual([
        [first.id, 1, 'pending'],
        [later.id, 2, 'pending'],
      ]);
      expect((await listed(old(41))).map(([id, version]) => `${id}:${version}`)).toContain(`${later.id}:1`);
    });

    it('counts the backlog (pending and processing versions) and the versions completed since an instant, per workspace', async () => {
      const busy = newWorkspace();
      const quiet = newWorkspace();
      const untouched = newWorkspace();
      const pending = await createDoc(busy);
      await store.appendVersion(busy, pending.id, () => newVersion());
      const processing = await createDoc(busy);
      await store.updateVersion(processing.id, 1, { status: 'processing' });
      const deleted = await createDoc(busy);
      await store.softDelete(busy, deleted.id, old(30));
      const failed = await createDoc(busy);
      await store.updateVersion(failed.id, 1, { status: 'failed' });
      const completedAt = new Date(Date.now() - 60_000).toISOString();
      const done = await createDoc(busy);
      await store.completeVersion(done.id, 1, { at: completedAt, chunkCount: 0, tokens: 0, embeddingModel: null });
      const quietDone = await createDoc(quiet);
      await store.completeVersion(quietDone.id, 1, { at: completedAt, chunkCount: 0, tokens: 0, embeddingModel: null });

      const before = await store.countBacklog(new Date(Date.parse(completedAt) - 1000).toISOString());
      // Two versions of `pending`, `processing`, and the deleted document's version still waiting.
      expect(before.unfinished[busy]).toBe(4);
      expect(before.unfinished[quiet]).toBeUndefined();
      expect(before.unfinished[untouched]).toBeUndefined();
      expect(before.completed[busy]).toBe(1);
      expect(before.completed[quiet]).toBe(1);
      expect(before.completed[untouched]).toBeUndefined();

      const after = await store.countBacklog(new Date(Date.parse(completedAt) + 1).toISOString());
      expect(after.unfinished[busy]).toBe(4);
      expect(after.completed[busy]).toBeUndefined();

      await store.updateVersion(processing.id, 1, { status: 'failed' });
      await store.purge(busy, pending.id);
      expect((await store.countBacklog(completedAt)).unfinished[busy]).toBe(1);
    });
  });
}
