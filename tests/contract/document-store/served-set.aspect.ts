import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, axis, chunkInput, FAR_FUTURE, ids, MODEL, newWorkspace, withVector } from './fixtures.ts';

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
