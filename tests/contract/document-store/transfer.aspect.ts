import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';
import { at, axis, chunkInput, ids, newVersion, newWorkspace, sha256, withVector } from './fixtures.ts';

/** The backup role: a snapshot reads documents with every version, an import writes them back as given. */
export function transferAspect(suite: ContractContext): void {
  const { store, servedDoc, nearest, keyword } = suite;

  describe('transfer', () => {
    it('reads a document with its source item and every version, and imports it back unchanged', async () => {
      const workspace = newWorkspace();
      const doc = await store.createDocument({
        id: randomUUID(),
        workspaceId: workspace,
        source: 'handbook',
        sourceItem: 'guide/index.md',
        firstVersion: newVersion({ name: 'guide/index.md', contentHash: sha256('v1') }),
      });
      await store.appendVersion(workspace, doc.id, () =>
        newVersion({ name: 'guide/index.md', contentHash: sha256('v2'), createdAt: at(1) }),
      );

      const snapshot = await store.openSnapshot();
      let found: Awaited<ReturnType<typeof snapshot.documents>>[number] | undefined;
      try {
        for (let after = ''; found === undefined; ) {
          const page = await snapshot.documents(after, 500);
          if (page.length === 0) break;
          found = page.find((entry) => entry.document.id === doc.id);
          after = page[page.length - 1]!.document.id;
        }
      } finally {
        await snapshot.close();
      }
      expect(found?.document.sourceItem).toBe('guide/index.md');
      expect(found?.versions.map((v) => [v.version, v.contentHash])).toEqual([
        [1, sha256('v1')],
        [2, sha256('v2')],
      ]);

      // Imported under another id: the copy reads back like the original.
      const copyId = randomUUID();
      await store.importDocument(
        { ...found!.document, id: copyId },
        found!.versions.map((v) => ({ ...v, documentId: copyId })),
      );
      await store.finishImport();
      const copy = await store.getDocument(workspace, copyId);
      expect(copy?.sourceItem).toBe('guide/index.md');
      expect(copy?.latestVersion).toBe(2);
      expect(copy?.latest.contentHash).toBe(sha256('v2'));
      const found2 = await store.lookupSourceItems(workspace, [{ source: 'handbook', sourceItem: 'guide/index.md' }]);
      expect(found2.map((d) => d.id).sort()).toEqual([doc.id, copyId].sort());
    });

    it('imports chunks with their vectors as given: after finishImport every search finds them, served', async () => {
      const workspace = newWorkspace();
      const original = await servedDoc(workspace, ['the original text']);
      const copyId = randomUUID();
      const versions = (await store.listVersions(workspace, original.id)).map((v) => ({ ...v, documentId: copyId }));
      await store.importDocument({ ...original, id: copyId }, versions);
      const copy = { ...original, id: copyId };
      await store.importChunks([
        withVector(chunkInput(copy, 1, 0, 'imported lighthouse keeper'), axis(3)),
        withVector(chunkInput(copy, 1, 1, 'imported harbour master'), axis(4)),
      ]);
      await store.finishImport();
      expect(ids(await nearest(workspace, axis(3), { filters: { documentIds: [copyId] } }))).toEqual([
        `${copyId}:1:0`,
        `${copyId}:1:1`,
      ]);
      expect(ids(await keyword(workspace, 'lighthouse'))).toEqual([`${copyId}:1:0`]);
      const [hit] = await nearest(workspace, axis(4), { filters: { documentIds: [copyId] }, limit: 1 });
      expect(hit?.score).toBeCloseTo(1, 4);
    });
  });
}
