import { describe, expect, it } from 'vitest';
import type { SearchFilters } from '../../../core/model/search-filters.model.ts';
import type { ContractContext } from './context.ts';
import { at, axis, chunkInput, ids, MODEL, newWorkspace, record, unit } from './fixtures.ts';

/** Vector search: cosine ranking, workspace, filters and served instants. */
export function vectorSearchAspect(suite: ContractContext): void {
  const { store, servedDoc, addVersion, nearest } = suite;
  describe('vector search', () => {
    it('ranks the nearest vector first with cosine similarity scores', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['same direction', 'diagonal', 'orthogonal', 'opposite'], {
        vectors: [axis(0), unit([1, 1]), axis(2), unit([-1])],
      });
      const hits = await nearest(workspaceId, axis(0));
      expect(ids(hits)).toEqual([0, 1, 2, 3].map((index) => `${doc.id}:1:${index}`));
      const scores = hits.map((hit) => hit.score);
      expect(scores[0]).toBeCloseTo(1, 4);
      expect(scores[1]).toBeCloseTo(Math.SQRT1_2, 4);
      expect(scores[2]).toBeCloseTo(0, 4);
      expect(scores[3]).toBeCloseTo(-1, 4);
      expect(hits[0]?.documentName).toBe(doc.latest.name);
      expect(hits[0]?.chunk).toEqual(record(chunkInput(doc, 1, 0, 'same direction')));
      expect(ids(await nearest(workspaceId, unit([1, 1]), { limit: 1 }))).toEqual([`${doc.id}:1:1`]);
    });

    it('respects the workspace and every filter', async () => {
      const workspaceId = newWorkspace();
      const a = await servedDoc(workspaceId, ['a'], {
        vectors: [axis(0)],
        mimeType: 'text/plain',
        metadata: { team: 'core' },
        createdAt: at(1),
      });
      const b = await servedDoc(workspaceId, ['b'], {
        vectors: [unit([1, 0.2])],
        mimeType: 'application/pdf',
        metadata: { team: 'search' },
        createdAt: at(2),
      });
      await servedDoc(newWorkspace(), ['exact match elsewhere'], { vectors: [axis(0)] });
      const find = async (filters: SearchFilters) => ids(await nearest(workspaceId, axis(0), { filters }));
      expect(await find({})).toEqual([`${a.id}:1:0`, `${b.id}:1:0`]);
      expect(await find({ documentIds: [b.id] })).toEqual([`${b.id}:1:0`]);
      expect(await find({ mimeTypes: ['application/pdf'] })).toEqual([`${b.id}:1:0`]);
      expect(await find({ metadata: { team: ['search'] } })).toEqual([`${b.id}:1:0`]);
      expect(await find({ createdAfter: at(2) })).toEqual([`${b.id}:1:0`]);
      expect(await find({ createdBefore: at(2) })).toEqual([`${a.id}:1:0`]);
    });

    it('returns only the versions served at the requested instant', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['first'], { vectors: [axis(0)], servedAt: at(10) });
      await addVersion(doc, ['second'], { completeAt: null, vectors: [axis(1)] });
      expect(ids(await nearest(workspaceId, axis(1)))).toEqual([`${doc.id}:1:0`]);
      await store.completeVersion(doc.id, 2, { at: at(20), chunkCount: 1, tokens: 1, embeddingModel: MODEL.model });
      expect(ids(await nearest(workspaceId, axis(0)))).toEqual([`${doc.id}:2:0`]);
      expect(ids(await nearest(workspaceId, axis(1), { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
      expect(await nearest(workspaceId, axis(0), { asOf: at(5) })).toEqual([]);
    });

    it('rejects a query vector of the wrong dimensions and finds nothing for a zero vector', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['vector holder']);
      await store.setChunkVectors(MODEL.model, new Map([[`${doc.id}:1:0`, axis(0)]]));
      await expect(nearest(workspaceId, new Float32Array(MODEL.dimensions - 1))).rejects.toMatchObject({
        code: 'model-mismatch',
      });
      expect(await nearest(workspaceId, new Float32Array(MODEL.dimensions))).toEqual([]);
      expect((await nearest(workspaceId, axis(1))).map((hit) => hit.score)).toEqual([expect.closeTo(0, 4)]);
    });
  });
}
