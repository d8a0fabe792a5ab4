import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, newVersion, newWorkspace, sha256 } from './fixtures.ts';

/** Documents found by the (source, item) they were created for. */
export function sourceItemsAspect(suite: ContractContext): void {
  const { store } = suite;
  const create = (
    workspaceId: string,
    source: string,
    sourceItem: string | undefined,
    content: string = randomUUID(),
  ) =>
    store.createDocument({
      id: randomUUID(),
      workspaceId,
      source,
      ...(sourceItem !== undefined ? { sourceItem } : {}),
      firstVersion: newVersion({ name: sourceItem ?? 'loose.txt', contentHash: sha256(content) }),
    });

  describe('source items', () => {
    it('records the item a document was created for and answers it on reads', async () => {
      const workspace = newWorkspace();
      const doc = await create(workspace, 'handbook', 'guide/index.md');
      expect(doc.sourceItem).toBe('guide/index.md');
      expect((await store.getDocument(workspace, doc.id))?.sourceItem).toBe('guide/index.md');
      const plain = await create(workspace, 'upload', undefined);
      expect((await store.getDocument(workspace, plain.id))?.sourceItem).toBeUndefined();
    });

    it('finds the documents of exact (source, item) pairs with their latest version, in one call', async () => {
      const workspace = newWorkspace();
      const guide = await create(workspace, 'handbook', 'guide/index.md', 'guide v1');
      const api = await create(workspace, 'handbook', 'api/index.md', 'api v1');
      const otherSource = await create(workspace, 'wiki', 'guide/index.md');
      await create(workspace, 'handbook', 'Guide/index.md');
      await create(workspace, 'handbook', undefined);
      // Another workspace's document of the same pair is never answered.
      await create(newWorkspace(), 'handbook', 'guide/index.md');
      const appended = await store.appendVersion(workspace, guide.id, () =>
        newVersion({ name: 'guide/index.md', contentHash: sha256('guide v2'), createdAt: at(1) }),
      );

      const found = await store.lookupSourceItems(workspace, [
        { source: 'handbook', sourceItem: 'guide/index.md' },
        { source: 'handbook', sourceItem: 'api/index.md' },
        { source: 'wiki', sourceItem: 'guide/index.md' },
        { source: 'handbook', sourceItem: 'missing.md' },
        { source: 'wiki', sourceItem: 'api/index.md' },
        { source: 'handbook', sourceItem: 'guide/index.md' },
      ]);
      expect(found.map((d) => [d.id, d.source, d.sourceItem, d.latestVersion, d.latest.contentHash])).toEqual([
        [api.id, 'handbook', 'api/index.md', 1, sha256('api v1')],
        [guide.id, 'handbook', 'guide/index.md', 2, sha256('guide v2')],
        [otherSource.id, 'wiki', 'guide/index.md', 1, otherSource.latest.contentHash],
      ]);
      expect(found[1]?.latest.version).toBe(appended.version);
      expect(await store.lookupSourceItems(workspace, [])).toEqual([]);
    });

    it('answers every document of a pair created more than once, oldest first, and none deleted', async () => {
      const workspace = newWorkspace();
      const first = await create(workspace, 'loader', 'a.md');
      const second = await create(workspace, 'loader', 'a.md');
      const gone = await create(workspace, 'loader', 'b.md');
      await store.softDelete(workspace, gone.id, at(5));
      const found = await store.lookupSourceItems(workspace, [
        { source: 'loader', sourceItem: 'a.md' },
        { source: 'loader', sourceItem: 'b.md' },
      ]);
      const expected = [first, second].sort(
        (x, y) => x.createdAt.localeCompare(y.createdAt) || x.id.localeCompare(y.id),
      );
      expect(found.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    });

    it('answers a thousand pairs in one call', async () => {
      const workspace = newWorkspace();
      const docs = await Promise.all(
        Array.from({ length: 30 }, (_, i) => create(workspace, 'bulk', `folder/${String(i).padStart(4, '0')}.md`)),
      );
      const asked = Array.from({ length: 1000 }, (_, i) => ({
        source: 'bulk',
        sourceItem: `folder/${String(i).padStart(4, '0')}.md`,
      }));
      const found = await store.lookupSourceItems(workspace, asked);
      expect(found.map((d) => d.id)).toEqual(docs.map((d) => d.id));
    });
  });
}
