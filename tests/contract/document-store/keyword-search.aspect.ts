import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SearchFilters } from '../../../core/model/search-filters.model.ts';
import type { ContractContext } from './context.ts';
import { at, chunkInput, docIds, ids, MODEL, newVersion, newWorkspace, record, sorted } from './fixtures.ts';

/** Keyword search: matching, order, workspace and filters. */
export function keywordSearchAspect(suite: ContractContext): void {
  const { store, servedDoc, keyword } = suite;
  describe('keyword search', () => {
    it('finds a word and returns the chunk with its version’s name, metadata and mime type', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['The quick brown fox jumps over the lazy dog', 'Tides of the ocean'], {
        name: 'animals.md',
        mimeType: 'text/markdown',
        metadata: { team: 'zoo' },
      });
      const hits = await keyword(workspaceId, 'fox');
      expect(hits).toHaveLength(1);
      const hit = hits[0]!;
      expect(hit.chunk).toEqual(record(chunkInput(doc, 1, 0, 'The quick brown fox jumps over the lazy dog')));
      expect(hit.documentName).toBe('animals.md');
      expect(hit.documentMetadata).toEqual({ team: 'zoo' });
      expect(hit.mimeType).toBe('text/markdown');
      expect(Number.isFinite(hit.score)).toBe(true);
      expect(ids(await keyword(workspaceId, 'ocean'))).toEqual([`${doc.id}:1:1`]);
      expect(await keyword(workspaceId, 'submarine')).toEqual([]);
    });

    it('sorts by score, best first, and honours the limit', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, [
        'a giraffe was seen far away from the river bank near some tall trees late yesterday evening',
        'giraffe giraffe giraffe',
        'nothing about that animal here',
      ]);
      const other = await servedDoc(workspaceId, ['the giraffe and the zebra and the lion and the elephant']);
      const hits = await keyword(workspaceId, 'giraffe');
      expect(ids(hits)[0]).toBe(`${doc.id}:1:1`);
      expect(sorted(ids(hits))).toEqual(sorted([`${doc.id}:1:0`, `${doc.id}:1:1`, `${other.id}:1:0`]));
      const scores = hits.map((hit) => hit.score);
      expect(scores).toEqual([...scores].sort((x, y) => y - x));
      expect(ids(await keyword(workspaceId, 'giraffe', { limit: 1 }))).toEqual([`${doc.id}:1:1`]);
    });

    it('reads the query as words, never as query syntax', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['The quick brown fox', 'Tides of the ocean']);
      expect(ids(await keyword(workspaceId, 'fox" AND (NEAR* -'))).toContain(`${doc.id}:1:0`);
      expect(ids(await keyword(workspaceId, 'title:fox OR ocean^2'))).toEqual(
        expect.arrayContaining([`${doc.id}:1:0`, `${doc.id}:1:1`]),
      );
      expect(await keyword(workspaceId, '')).toEqual([]);
      expect(await keyword(workspaceId, '"*()" ::')).toEqual([]);
    });

    it('finds a rewritten chunk by its new words only', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['pelican migration', 'heron nesting']);
      await store.putChunks([chunkInput(doc, 1, 0, 'flamingo migration')]);
      expect(await keyword(workspaceId, 'pelican')).toEqual([]);
      expect(ids(await keyword(workspaceId, 'flamingo'))).toEqual([`${doc.id}:1:0`]);
      expect(ids(await keyword(workspaceId, 'migration'))).toEqual([`${doc.id}:1:0`]);
      await store.deleteChunks(doc.id, 1);
      expect(await keyword(workspaceId, 'heron')).toEqual([]);
    });

    it('searches only the given workspace', async () => {
      const workspaceId = newWorkspace();
      const mine = await servedDoc(workspaceId, ['walrus colony on the ice']);
      await servedDoc(newWorkspace(), ['walrus colony on the beach']);
      expect(docIds(await keyword(workspaceId, 'walrus'))).toEqual([mine.id]);
      expect(await keyword(newWorkspace(), 'walrus')).toEqual([]);
    });

    it('filters by document ids, mime types and creation time ([after, before))', async () => {
      const workspaceId = newWorkspace();
      const p = await servedDoc(workspaceId, ['lantern in the dark'], { mimeType: 'text/plain', createdAt: at(10) });
      const q = await servedDoc(workspaceId, ['lantern on the table'], {
        mimeType: 'text/markdown',
        createdAt: at(20),
      });
      const r = await servedDoc(workspaceId, ['lantern by the door'], {
        mimeType: 'application/pdf',
        createdAt: at(30),
      });
      const find = async (filters: SearchFilters) => docIds(await keyword(workspaceId, 'lantern', { filters }));
      expect(await find({})).toEqual(sorted([p.id, q.id, r.id]));
      expect(await find({ documentIds: [p.id, r.id] })).toEqual(sorted([p.id, r.id]));
      expect(await find({ documentIds: [randomUUID()] })).toEqual([]);
      expect(await find({ documentIds: [] })).toEqual(sorted([p.id, q.id, r.id]));
      expect(await find({ mimeTypes: ['text/markdown', 'application/pdf'] })).toEqual(sorted([q.id, r.id]));
      expect(await find({ createdAfter: at(20) })).toEqual(sorted([q.id, r.id]));
      expect(await find({ createdBefore: at(20) })).toEqual([p.id]);
      expect(await find({ createdAfter: at(10), createdBefore: at(30) })).toEqual(sorted([p.id, q.id]));
      expect(await find({ documentIds: [p.id, q.id], mimeTypes: ['text/markdown'] })).toEqual([q.id]);
    });

    it('filters on version metadata by equality and by a list of values', async () => {
      const workspaceId = newWorkspace();
      const m1 = await servedDoc(workspaceId, ['lantern one'], {
        metadata: { team: 'core', year: 2024, public: true },
      });
      const m2 = await servedDoc(workspaceId, ['lantern two'], {
        metadata: { team: 'search', year: 2023, public: false },
      });
      const m3 = await servedDoc(workspaceId, ['lantern three'], { metadata: { team: 'infra' } });
      const find = async (metadata: NonNullable<SearchFilters['metadata']>) =>
        docIds(await keyword(workspaceId, 'lantern', { filters: { metadata } }));
      expect(await find({ team: ['core'] })).toEqual([m1.id]);
      expect(await find({ team: ['core', 'search'] })).toEqual(sorted([m1.id, m2.id]));
      expect(await find({ team: ['core', 'search'], year: [2023] })).toEqual([m2.id]);
      expect(await find({ year: [2024, 2022] })).toEqual([m1.id]);
      expect(await find({ public: [true] })).toEqual([m1.id]);
      expect(await find({ public: [false] })).toEqual([m2.id]);
      expect(await find({ team: ['infra'], year: [2024] })).toEqual([]);
      expect(await find({ owner: ['nobody'] })).toEqual([]);
      expect(await find({ team: ['infra'] })).toEqual([m3.id]);
    });

    it('filters on and reports the metadata of the chunk’s own version', async () => {
      const workspaceId = newWorkspace();
      const doc = await servedDoc(workspaceId, ['quarterly lantern figures'], {
        metadata: { stage: 'draft' },
        servedAt: at(10),
      });
      await store.appendVersion(workspaceId, doc.id, (latest) =>
        newVersion({ name: latest.name, metadata: { stage: 'final' } }),
      );
      await store.copyChunks(doc.id, 1, 2);
      await store.completeVersion(doc.id, 2, { at: at(20), chunkCount: 1, tokens: 3, embeddingModel: MODEL.model });

      const final = await keyword(workspaceId, 'lantern', { filters: { metadata: { stage: ['final'] } } });
      expect(ids(final)).toEqual([`${doc.id}:2:0`]);
      expect(final[0]?.documentMetadata).toEqual({ stage: 'final' });
      expect(await keyword(workspaceId, 'lantern', { filters: { metadata: { stage: ['draft'] } } })).toEqual([]);
      const earlier = await keyword(workspaceId, 'lantern', {
        asOf: at(15),
        filters: { metadata: { stage: ['draft'] } },
      });
      expect(ids(earlier)).toEqual([`${doc.id}:1:0`]);
      expect(earlier[0]?.documentMetadata).toEqual({ stage: 'draft' });
    });

    it('filters on metadata keys with quotes, dots and backslashes, type-exactly, and on list values by element', async () => {
      const workspaceId = newWorkspace();
      const odd = await servedDoc(workspaceId, ['harbour one'], {
        metadata: { 'team "core"': 'x', 'a.b': 1, 'c\\d': true, tags: ['red', 2] },
      });
      const plain = await servedDoc(workspaceId, ['harbour two'], {
        metadata: { a: { b: 1 }, tags: 'red', year: '2024' },
      });
      const find = async (metadata: NonNullable<SearchFilters['metadata']>) =>
        (await keyword(workspaceId, 'harbour', { limit: 10, filters: { metadata } })).map(
          (hit) => hit.chunk.documentId,
        );
      expect(await find({ 'team "core"': ['x'] })).toEqual([odd.id]);
      expect(await find({ 'a.b': [1] })).toEqual([odd.id]);
      expect(await find({ 'c\\d': [true] })).toEqual([odd.id]);
      expect((await find({ tags: ['red'] })).sort()).toEqual([odd.id, plain.id].sort());
      expect(await find({ tags: [2] })).toEqual([odd.id]);
      expect(await find({ year: [2024] })).toEqual([]);
      expect(await find({ year: ['2024'] })).toEqual([plain.id]);
      expect(await find({ 'c\\d': [1] })).toEqual([]);
    });
  });
}
