import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import type { ContractContext } from './context.ts';
import { at, listIds, MODEL, newVersion, newWorkspace } from './fixtures.ts';

/** Documents: creation, reads, listing and paging, the change mark, versions and their patches. */
export function documentsAspect(suite: ContractContext): void {
  const { store, createDoc, keyword } = suite;
  describe('documents', () => {
    it('creates a document whose first version is pending and reads it back', async () => {
      const workspaceId = newWorkspace();
      const id = randomUUID();
      const firstVersion = newVersion({
        name: 'handbook.md',
        mimeType: 'text/markdown',
        metadata: { team: 'core', year: 2024, public: true },
        createdAt: at(1),
      });
      const created = await store.createDocument({ id, workspaceId, source: 'crawler', firstVersion });
      expect(created).toMatchObject({
        id,
        workspaceId,
        source: 'crawler',
        createdAt: at(1),
        deletedAt: null,
        latestVersion: 1,
        servedVersion: null,
      });
      expect(created.latest).toEqual({
        ...firstVersion,
        documentId: id,
        workspaceId,
        version: 1,
        status: 'pending',
        completedAt: null,
        servedFrom: null,
        servedUntil: null,
        chunkCount: 0,
        tokens: 0,
        embeddingModel: null,
        error: null,
        progress: null,
        archivedAt: null,
      });
      expect(await store.getDocument(workspaceId, id)).toEqual(created);
      expect(await store.getDocument(newWorkspace(), id)).toBeNull();
      expect(await store.getDocument(workspaceId, randomUUID())).toBeNull();
    });

    it('rejects a second document with an existing id', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await expect(createDoc(workspaceId, { id: doc.id })).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.getDocument(workspaceId, doc.id))?.latest.storageKey).toBe(doc.latest.storageKey);
    });

    it('lists newest first, ties by id descending, with the total, and never another workspace', async () => {
      const workspaceId = newWorkspace();
      const oldest = await createDoc(workspaceId, { createdAt: at(1) });
      const tieA = await createDoc(workspaceId, { createdAt: at(2) });
      const tieB = await createDoc(workspaceId, { createdAt: at(2) });
      const newest = await createDoc(workspaceId, { createdAt: at(3) });
      await createDoc(newWorkspace(), { createdAt: at(2) });
      const ties = [tieA.id, tieB.id].sort().reverse();
      const { documents, total } = await store.listDocuments({ workspaceId, limit: 10 });
      expect(listIds(documents)).toEqual([newest.id, ...ties, oldest.id]);
      expect(total).toBe(4);
      expect(documents[0]).toEqual(newest);
    });

    it('pages with a cursor through every document exactly once', async () => {
      const workspaceId = newWorkspace();
      for (const minute of [5, 1, 4, 2, 3]) await createDoc(workspaceId, { createdAt: at(minute) });
      const all = await store.listDocuments({ workspaceId, limit: 100 });
      const seen: string[] = [];
      let after: { createdAt: string; id: string } | undefined;
      const pageSizes: number[] = [];
      // Bounded, so a cursor that does not advance fails instead of looping.
      for (let round = 0; round < 10; round += 1) {
        const page = await store.listDocuments({ workspaceId, limit: 2, ...(after ? { after } : {}) });
        expect(page.total).toBe(5);
        pageSizes.push(page.documents.length);
        if (page.documents.length === 0) break;
        seen.push(...listIds(page.documents));
        const last = page.documents[page.documents.length - 1]!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(listIds(all.documents));
      expect(pageSizes).toEqual([2, 2, 1, 0]);
      expect(all.documents.map((doc) => doc.createdAt)).toEqual([at(5), at(4), at(3), at(2), at(1)]);
    });

    it('moves its change mark by the time a write resolves, and trusts a known total', async () => {
      const workspaceId = newWorkspace();
      const before = store.changeMark();
      expect(store.changeMark()).toBe(before);
      const doc = await createDoc(workspaceId);
      const afterCreate = store.changeMark();
      expect(afterCreate).not.toBe(before);
      await store.updateVersion(doc.id, 1, { status: 'processing' });
      expect(store.changeMark()).not.toBe(afterCreate);
      expect((await store.listDocuments({ workspaceId, limit: 10 })).total).toBe(1);
      const known = await store.listDocuments({ workspaceId, limit: 10, knownTotal: 7 });
      expect(known.total).toBe(7);
      expect(listIds(known.documents)).toEqual([doc.id]);
    });

    it('moves its change mark within the stated bound when another instance writes', async (context) => {
      const second = suite.harness?.second;
      if (second === undefined) return context.skip();
      const workspaceId = newWorkspace();
      const before = store.changeMark();
      const doc = await second.store.createDocument({
        id: randomUUID(),
        workspaceId,
        source: 'upload',
        firstVersion: newVersion(),
      });
      const deadline = Date.now() + second.changeBoundMs + 2000;
      while (store.changeMark() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(store.changeMark()).not.toBe(before);
      // Another instance's new document reaches this one's list within the same bound.
      const listed = async () => listIds((await store.listDocuments({ workspaceId, limit: 10 })).documents);
      while ((await listed()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await listed()).toEqual([doc.id]);
      // So does a status its pipeline stage set there.
      await second.store.updateVersion(doc.id, 1, { status: 'failed' });
      const failed = async () =>
        listIds((await store.listDocuments({ workspaceId, limit: 10, status: 'failed' })).documents);
      const statusDeadline = Date.now() + second.changeBoundMs + 2000;
      while ((await failed()).length === 0 && Date.now() < statusDeadline) await new Promise((r) => setTimeout(r, 50));
      expect(await failed()).toEqual([doc.id]);
    });

    it('pages with an offset', async () => {
      const workspaceId = newWorkspace();
      for (const minute of [1, 2, 3, 4, 5]) await createDoc(workspaceId, { createdAt: at(minute) });
      const all = listIds((await store.listDocuments({ workspaceId, limit: 100 })).documents);
      const second = await store.listDocuments({ workspaceId, limit: 2, offset: 2 });
      expect(listIds(second.documents)).toEqual(all.slice(2, 4));
      expect(second.total).toBe(5);
      expect(listIds((await store.listDocuments({ workspaceId, limit: 2, offset: 4 })).documents)).toEqual(
        all.slice(4),
      );
      const beyond = await store.listDocuments({ workspaceId, limit: 2, offset: 10 });
      expect(beyond).toEqual({ documents: [], total: 5 });
    });

    it('filters by latest status, source and creation time ([after, before))', async () => {
      const workspaceId = newWorkspace();
      const a = await createDoc(workspaceId, { createdAt: at(10) });
      const b = await createDoc(workspaceId, { createdAt: at(20), source: 'crawler' });
      await store.completeVersion(b.id, 1, { at: at(21), chunkCount: 0, tokens: 0, embeddingModel: null });
      const c = await createDoc(workspaceId, { createdAt: at(30) });
      await store.updateVersion(c.id, 1, { status: 'failed' });
      const d = await createDoc(workspaceId, { createdAt: at(40) });
      await store.completeVersion(d.id, 1, { at: at(41), chunkCount: 0, tokens: 0, embeddingModel: null });
      await store.appendVersion(workspaceId, d.id, () => newVersion({ createdAt: at(42) }));

      const list = async (query: Partial<Parameters<DocumentStore['listDocuments']>[0]>) => {
        const result = await store.listDocuments({ workspaceId, limit: 10, ...query });
        expect(result.total).toBe(result.documents.length);
        return listIds(result.documents);
      };
      expect(await list({ status: 'completed' })).toEqual([b.id]);
      expect(await list({ status: 'pending' })).toEqual([d.id, a.id]);
      expect(await list({ status: 'failed' })).toEqual([c.id]);
      expect(await list({ status: 'processing' })).toEqual([]);
      expect(await list({ source: 'crawler' })).toEqual([b.id]);
      expect(await list({ source: 'upload' })).toEqual([d.id, c.id, a.id]);
      expect(await list({ createdAfter: at(20) })).toEqual([d.id, c.id, b.id]);
      expect(await list({ createdBefore: at(30) })).toEqual([b.id, a.id]);
      expect(await list({ createdAfter: at(20), createdBefore: at(40) })).toEqual([c.id, b.id]);
      expect(await list({ source: 'upload', status: 'pending', createdAfter: at(15) })).toEqual([d.id]);
    });

    it('reads a document and one of its versions in one call, as getDocument and getVersion do', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ name: 'v2.txt' }));
      const both = async (version: number, workspace = workspaceId) => ({
        document: await store.getDocument(workspace, doc.id),
        version: await store.getVersion(doc.id, version),
      });
      for (const version of [1, 2, 3]) {
        expect(await store.getDocumentAndVersion(workspaceId, doc.id, version)).toEqual(await both(version));
      }
      expect((await store.getDocumentAndVersion(workspaceId, doc.id, 1)).version?.version).toBe(1);
      expect((await store.getDocumentAndVersion(workspaceId, doc.id, 2)).document?.latest.name).toBe('v2.txt');
      const elsewhere = newWorkspace();
      expect(await store.getDocumentAndVersion(elsewhere, doc.id, 1)).toEqual(await both(1, elsewhere));
      await store.softDelete(workspaceId, doc.id, at(30));
      const deleted = await store.getDocumentAndVersion(workspaceId, doc.id, 2);
      expect(deleted.document).toBeNull();
      expect(deleted.version?.version).toBe(2);
      expect(await store.getDocumentAndVersion(workspaceId, randomUUID(), 1)).toEqual({
        document: null,
        version: null,
      });
    });

    it('lists versions newest first and reads any version by document id', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ name: 'v2.txt' }));
      await store.appendVersion(workspaceId, doc.id, () => newVersion({ name: 'v3.txt' }));
      const versions = await store.listVersions(workspaceId, doc.id);
      expect(versions.map((version) => version.version)).toEqual([3, 2, 1]);
      expect(versions.map((version) => version.name)).toEqual(['v3.txt', 'v2.txt', doc.latest.name]);
      expect(await store.listVersions(newWorkspace(), doc.id)).toEqual([]);
      expect(await store.listVersions(workspaceId, randomUUID())).toEqual([]);
      expect(await store.getVersion(doc.id, 2)).toEqual(versions[1]);
      expect(await store.getVersion(doc.id, 4)).toBeNull();
      expect(await store.getVersion(randomUUID(), 1)).toBeNull();
    });

    it('patches only the given fields, and the document status follows its latest version', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId);
      const processing = await store.updateVersion(doc.id, 1, { status: 'processing' });
      expect(processing).toEqual({ ...doc.latest, status: 'processing' });
      expect((await store.getDocument(workspaceId, doc.id))?.latest.status).toBe('processing');

      const error = { code: 'corrupt-file', message: 'bad xref table', stage: 'parse', attempts: 1, at: at(3) };
      const failed = await store.updateVersion(doc.id, 1, { status: 'failed', error, chunkCount: 2, tokens: 7 });
      expect(failed).toEqual({ ...doc.latest, status: 'failed', error, chunkCount: 2, tokens: 7 });
      const modelled = await store.updateVersion(doc.id, 1, { embeddingModel: MODEL.model, error: null });
      expect(modelled).toMatchObject({ status: 'failed', error: null, embeddingModel: MODEL.model, chunkCount: 2 });
      const progress = { stage: 'embed', chunksDone: 64, chunksTotal: 300 };
      const progressed = await store.updateVersion(doc.id, 1, { progress });
      expect(progressed).toMatchObject({ status: 'failed', progress, chunkCount: 2 });
      expect((await store.getDocument(workspaceId, doc.id))?.latest.progress).toEqual(progress);
      expect(await store.updateVersion(doc.id, 1, { progress: null })).toMatchObject({ progress: null });

      await store.appendVersion(workspaceId, doc.id, () => newVersion());
      await store.updateVersion(doc.id, 1, { status: 'completed' });
      expect((await store.getDocument(workspaceId, doc.id))?.latest).toMatchObject({ version: 2, status: 'pending' });
      expect((await store.listDocuments({ workspaceId, limit: 10, status: 'completed' })).documents).toEqual([]);
      expect(await store.updateVersion(doc.id, 9, { status: 'failed' })).toBeNull();
    });

    it('stores timestamps in canonical ISO form and rejects unparseable ones', async () => {
      const workspaceId = newWorkspace();
      const doc = await createDoc(workspaceId, { createdAt: '2024-05-01T12:00:00+02:00' });
      expect(doc.createdAt).toBe('2024-05-01T10:00:00.000Z');
      expect(doc.latest.createdAt).toBe('2024-05-01T10:00:00.000Z');
      expect((await store.getDocument(workspaceId, doc.id))?.latest.createdAt).toBe('2024-05-01T10:00:00.000Z');
      await expect(keyword(workspaceId, 'x', { asOf: 'yesterday-ish' })).rejects.toMatchObject({
        code: 'bad-request',
      });
    });
  });
}
