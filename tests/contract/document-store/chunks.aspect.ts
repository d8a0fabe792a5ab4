import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import {
  at,
  axis,
  chunkInput,
  ids,
  MODEL,
  newVersion,
  newWorkspace,
  OTHER_MODEL,
  record,
  withVector,
} from './fixtures.ts';

/** Chunks: upserts, paging, copies, deletion, vectors of the index model. */
export function chunksAspect(suite: ContractContext): void {
  const { store, createDoc, nearest } = suite;
  describe('chunks', () => {
    it('upserts chunks by id: a replay changes nothing, a rewrite replaces', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      const chunks = ['first part', 'second part', 'third part'].map((text, index) => chunkInput(doc, 1, index, text));
      await store.putChunks(chunks);
      await store.putChunks(chunks);
      const listed = await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 });
      expect(listed).toEqual({ chunks: chunks.map(record), total: 3 });
      const rewritten = chunkInput(doc, 1, 1, 'second part, rewritten');
      await store.putChunks([rewritten]);
      expect(await store.getChunk(rewritten.id)).toEqual(record(rewritten));
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(3);
      expect(await store.getChunk(`${doc.id}:1:7`)).toBeNull();
    });

    it('pages chunks by index', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.putChunks([3, 0, 4, 1, 2].map((index) => chunkInput(doc, 1, index, `chunk number ${index}`)));
      const page = async (afterIndex: number) => {
        const result = await store.listChunks(doc.id, 1, { afterIndex, limit: 2 });
        expect(result.total).toBe(5);
        return result.chunks.map((chunk) => chunk.index);
      };
      expect(await page(-1)).toEqual([0, 1]);
      expect(await page(1)).toEqual([2, 3]);
      expect(await page(3)).toEqual([4]);
      expect(await page(4)).toEqual([]);
      expect(await store.listChunks(doc.id, 2, { afterIndex: -1, limit: 2 })).toEqual({ chunks: [], total: 0 });
    });

    it('copies a version’s chunks and vectors to another version under new ids', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      const texts = ['copy source alpha', 'copy source beta', 'copy source gamma'];
      await store.putChunks(texts.map((text, index) => withVector(chunkInput(doc, 1, index, text), axis(index))));
      await store.completeVersion(doc.id, 1, { at: at(5), chunkCount: 3, tokens: 9, embeddingModel: MODEL.model });
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ restoredFrom: 1 }));
      expect(await store.copyChunks(doc.id, 1, 2)).toBe(3);
      const copied = await store.listChunks(doc.id, 2, { afterIndex: -1, limit: 10 });
      expect(copied.chunks.map((chunk) => chunk.id)).toEqual([0, 1, 2].map((index) => `${doc.id}:2:${index}`));
      expect(copied.chunks.map((chunk) => chunk.content)).toEqual(texts);
      expect(copied.chunks.every((chunk) => chunk.version === 2 && chunk.workspaceId === workspaceId)).toBe(true);
      expect(await store.hasVectors(doc.id, 2)).toBe(true);
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(3);

      await store.completeVersion(doc.id, 2, { at: at(9), chunkCount: 3, tokens: 9, embeddingModel: MODEL.model });
      const hits = await nearest(workspaceId, axis(1), { limit: 1 });
      expect(ids(hits)).toEqual([`${doc.id}:2:1`]);
    });

    it('deletes the chunks of one version', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.putChunks([chunkInput(doc, 1, 0, 'keep me'), chunkInput(doc, 2, 0, 'drop me')]);
      await store.deleteChunks(doc.id, 2);
      expect((await store.listChunks(doc.id, 2, { afterIndex: -1, limit: 10 })).total).toBe(0);
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(1);
    });

    it('reports whether every chunk of a version has a vector of the index model', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.putChunks([
        withVector(chunkInput(doc, 1, 0, 'with vector'), axis(0)),
        withVector(chunkInput(doc, 1, 1, 'with vector too'), axis(1)),
        withVector(chunkInput(doc, 2, 0, 'with vector'), axis(0)),
        chunkInput(doc, 2, 1, 'without vector'),
      ]);
      expect(await store.hasVectors(doc.id, 1)).toBe(true);
      expect(await store.hasVectors(doc.id, 2)).toBe(false);
      expect(await store.hasVectors(doc.id, 3)).toBe(false);

      await store.setChunkVectors(MODEL.model, new Map([[`${doc.id}:2:1`, axis(2)]]));
      expect(await store.hasVectors(doc.id, 2)).toBe(true);
    });

    it('rejects vectors that do not fit the index model and writes nothing of the batch', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await expect(
        store.putChunks([
          withVector(chunkInput(doc, 1, 0, 'fits'), axis(0)),
          withVector(chunkInput(doc, 1, 1, 'too short'), axis(0, 4)),
        ]),
      ).rejects.toMatchObject({ code: 'model-mismatch' });
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(0);

      await store.putChunks([chunkInput(doc, 1, 0, 'no vector yet')]);
      await expect(store.setChunkVectors(MODEL.model, new Map([[`${doc.id}:1:0`, axis(0, 4)]]))).rejects.toMatchObject({
        code: 'model-mismatch',
      });
      await expect(
        store.setChunkVectors(OTHER_MODEL.model, new Map([[`${doc.id}:1:0`, axis(0, 4)]])),
      ).rejects.toMatchObject({ code: 'model-mismatch' });
      expect(await store.hasVectors(doc.id, 1)).toBe(false);
    });

    it('keeps the index model and refuses another one while vectors exist', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.putChunks([withVector(chunkInput(doc, 1, 0, 'vector holder'), axis(0))]);
      expect(await store.getIndexModel()).toEqual(MODEL);
      await store.setIndexModel(MODEL);
      await expect(store.setIndexModel(OTHER_MODEL)).rejects.toMatchObject({ code: 'model-mismatch' });
      await expect(store.setIndexModel({ ...MODEL, dimensions: 16 })).rejects.toMatchObject({
        code: 'model-mismatch',
      });
      expect(await store.getIndexModel()).toEqual(MODEL);
      expect(await store.hasVectors(doc.id, 1)).toBe(true);
    });
  });
}
