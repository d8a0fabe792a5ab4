import { expect, it } from 'vitest';
import type { ChunkRecord } from '../../../core/model/document-records.model.ts';
import type { ContractContext } from './context.ts';
import { at, axis, chunkInput, ids, MODEL, newWorkspace, OTHER_MODEL, sorted, withVector } from './fixtures.ts';

/** The index model on a store of its own: setting, switching with replace, scanning chunks. */
export function indexModelAspect(suite: ContractContext): void {
  const { store, createDoc } = suite;
  it('sets the model on an empty index and switches with replace, dropping every vector', async () => {
    const workspaceId = newWorkspace();
    expect(await store.getIndexModel()).toBeNull();
    const doc = await createDoc(workspaceId);
    await expect(store.putChunks([withVector(chunkInput(doc, 1, 0, 'early vector'), axis(0))])).rejects.toMatchObject({
      code: 'model-mismatch',
    });

    await store.setIndexModel(MODEL);
    expect(await store.getIndexModel()).toEqual(MODEL);
    await store.putChunks([
      withVector(chunkInput(doc, 1, 0, 'aurora borealis'), axis(0)),
      withVector(chunkInput(doc, 1, 1, 'aurora australis'), axis(1)),
    ]);
    await store.completeVersion(doc.id, 1, { at: at(10), chunkCount: 2, tokens: 4, embeddingModel: MODEL.model });
    const search = (vector: Float32Array) =>
      store.vectorSearch({ workspaceId, text: '', vector, limit: 10, asOf: null, filters: {} });
    expect(ids(await search(axis(0)))[0]).toBe(`${doc.id}:1:0`);

    await expect(store.setIndexModel(OTHER_MODEL)).rejects.toMatchObject({ code: 'model-mismatch' });
    await store.setIndexModel(OTHER_MODEL, { replace: true });
    expect(await store.getIndexModel()).toEqual(OTHER_MODEL);
    expect(await store.hasVectors(doc.id, 1)).toBe(false);
    expect(await search(axis(0, OTHER_MODEL.dimensions))).toEqual([]);
    const keywordHits = await store.keywordSearch({
      workspaceId,
      text: 'aurora',
      limit: 10,
      asOf: null,
      filters: {},
    });
    expect(keywordHits).toHaveLength(2);

    await store.setChunkVectors(
      OTHER_MODEL.model,
      new Map([
        [`${doc.id}:1:0`, axis(2, OTHER_MODEL.dimensions)],
        [`${doc.id}:1:1`, axis(3, OTHER_MODEL.dimensions)],
      ]),
    );
    expect(await store.hasVectors(doc.id, 1)).toBe(true);
    expect(ids(await search(axis(3, OTHER_MODEL.dimensions)))[0]).toBe(`${doc.id}:1:1`);
    await expect(
      store.putChunks([withVector(chunkInput(doc, 1, 2, 'old model vector'), axis(0))]),
    ).rejects.toMatchObject({ code: 'model-mismatch' });
  });

  it('scans every chunk in id order', async () => {
    const workspaceId = newWorkspace();
    const expected: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      const doc = await createDoc(workspaceId);
      const chunks = [0, 1, 2].map((index) => chunkInput(doc, 1, index, `scan ${n} ${index}`));
      await store.putChunks(chunks);
      expected.push(...chunks.map((chunk) => chunk.id));
    }
    const scanned: ChunkRecord[] = [];
    let afterId = '';
    let finished = false;
    // Bounded, so a scan that does not advance fails instead of looping.
    for (let round = 0; round < 1000 && !finished; round += 1) {
      const page = await store.scanChunks({ afterId, limit: 4 });
      finished = page.length === 0;
      if (finished) break;
      expect(page.length).toBeLessThanOrEqual(4);
      scanned.push(...page);
      afterId = page[page.length - 1]!.id;
    }
    expect(finished).toBe(true);
    const ours = scanned.filter((chunk) => chunk.workspaceId === workspaceId).map((chunk) => chunk.id);
    expect(ours).toEqual(sorted(expected));
    const all = scanned.map((chunk) => chunk.id);
    expect(all).toEqual(sorted(all));
    expect(new Set(all).size).toBe(all.length);
  });
}
