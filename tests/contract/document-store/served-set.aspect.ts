import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, axis, chunkInput, FAR_FUTURE, ids, MODEL, newVersion, newWorkspace, withVector } from './fixtures.ts';

/** The served set: what search sees now and as of a past instant. */
export function servedSetAspect(suite: ContractContext): void {
  const { store, createDoc, servedDoc, addVersion, keyword, nearest } = suite;
  describe('served set and as-of', () => {
    it('keeps serving v1 while v2 processes, then serves only v2; as-of sees what was served then', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['alpha original wording'], { servedAt: at(10) });
      const v2 = await addVersion(doc, ['omega revised wording'], { completeAt: null });
      expect(ids(await keyword(workspaceId, 'alpha'))).toEqual([`${doc.id}:1:0`]);
      expect(await keyword(workspaceId, 'omega')).toEqual([]);

      await store.completeVersion(doc.id, v2, { at: at(20), chunkCount: 1, tokens: 3, embeddingModel: MODEL.model });
      expect(await keyword(workspaceId, 'alpha')).toEqual([]);
      expect(ids(await keyword(workspaceId, 'omega'))).toEqual([`${doc.id}:2:0`]);
      expect(ids(await keyword(workspaceId, 'wording'))).toEqual([`${doc.id}:2:0`]);

      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(10) }))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(20) }))).toEqual([`${doc.id}:2:0`]);
      // The same instant as at(15), written with a zone offset.
      expect(ids(await keyword(workspaceId, 'wording', { asOf: '2024-03-01T01:15:00+01:00' }))).toEqual([
        `${doc.id}:1:0`,
      ]);
      expect(ids(await keyword(workspaceId, 'wording', { asOf: FAR_FUTURE }))).toEqual([`${doc.id}:2:0`]);
      expect(await keyword(workspaceId, 'wording', { asOf: at(5) })).toEqual([]);
    });

    it('completes a version with its chunks in one call as putChunks then completeVersion would', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['alpha original wording'], { servedAt: at(10) });
      const v2 = (await store.appendVersion(workspaceId, doc.id, () => newVersion({ name: 'v2.txt' }))).version;
      await store.updateVersion(doc.id, v2, { status: 'processing' });
      const chunks = [
        withVector(chunkInput(doc, v2, 0, 'omega revised wording'), axis(1)),
        withVector(chunkInput(doc, v2, 1, 'omega second passage'), axis(2)),
      ];
      const result = { at: at(20), chunkCount: 2, tokens: 6, embeddingModel: MODEL.model };
      const completed = { name: 'v2.txt', completedAt: at(20), source: 'upload' };
      expect(await store.completeVersionWithChunks(doc.id, v2, chunks, result)).toEqual({ served: true, completed });

      expect(await keyword(workspaceId, 'alpha')).toEqual([]);
      expect(ids(await keyword(workspaceId, 'omega')).sort()).toEqual([`${doc.id}:2:0`, `${doc.id}:2:1`].sort());
      expect(ids(await nearest(workspaceId, axis(2))).slice(0, 1)).toEqual([`${doc.id}:2:1`]);
      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(20) }))).toEqual([`${doc.id}:2:0`]);
      expect(await store.getVersion(doc.id, v2)).toMatchObject({ status: 'completed', chunkCount: 2, tokens: 6 });
      expect((await store.listChunks(doc.id, v2, { afterIndex: -1, limit: 10 })).total).toBe(2);

      // A retry (a redelivered event) changes nothing.
      expect(await store.completeVersionWithChunks(doc.id, v2, chunks, result)).toEqual({ served: true, completed });
      expect(ids(await keyword(workspaceId, 'wording', { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await keyword(workspaceId, 'wording'))).toEqual([`${doc.id}:2:0`]);
    });

    it('writes the chunks of a version completed after a newer one, without serving them', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['alpha original wording'], { servedAt: at(10) });
      const v2 = (await store.appendVersion(workspaceId, doc.id, () => newVersion())).version;
      const v3 = await addVersion(doc, ['gamma newest wording'], { completeAt: at(30) });
      const late = [withVector(chunkInput(doc, v2, 0, 'omega late wording'), axis(1))];
      const result = { at: at(31), chunkCount: 1, tokens: 3, embeddingModel: MODEL.model };
      expect(await store.completeVersionWithChunks(doc.id, v2, late, result)).toMatchObject({
        served: false,
        completed: { completedAt: at(31) },
      });
      expect((await store.listChunks(doc.id, v2, { afterIndex: -1, limit: 10 })).total).toBe(1);
      expect(await keyword(workspaceId, 'omega')).toEqual([]);
      expect(await keyword(workspaceId, 'omega', { asOf: FAR_FUTURE })).toEqual([]);
      expect(ids(await keyword(workspaceId, 'wording'))).toEqual([`${doc.id}:${v3}:0`]);
    });

    it('never serves a version that has not completed', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.putChunks([withVector(chunkInput(doc, 1, 0, 'unfinished ingestion'), axis(0))]);
      await store.updateVersion(doc.id, 1, { status: 'processing' });
      expect(await keyword(workspaceId, 'unfinished')).toEqual([]);
      expect(await keyword(workspaceId, 'unfinished', { asOf: FAR_FUTURE })).toEqual([]);
      expect(await nearest(workspaceId, axis(0))).toEqual([]);
    });
  });
}
