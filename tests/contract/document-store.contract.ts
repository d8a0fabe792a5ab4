import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ChunkInput,
  ChunkRecord,
  DocumentRecord,
  DocumentStore,
  IndexModel,
  Metadata,
  NewVersion,
  SearchFilters,
  SearchHit,
} from '../../pipeline/ports/document-store/document-store.port.ts';

/** What a contract run needs: a store and a way to dispose of it and its storage. */
export interface DocumentStoreHarness {
  readonly store: DocumentStore;
  /**
   * Another instance on the same storage (as another process would open it), closed by `cleanup`,
   * and how soon the adapter promises that `store.changeMark()` notices that instance's writes.
   */
  readonly second?: { readonly store: DocumentStore; readonly changeBoundMs: number };
  cleanup(): Promise<void>;
}

const MODEL: IndexModel = { model: 'contract/test-embedding-8d', dimensions: 8 };
const OTHER_MODEL: IndexModel = { model: 'contract/other-embedding-4d', dimensions: 4 };

const BASE = Date.parse('2024-03-01T00:00:00.000Z');
/** A fixed instant `minutes` after the suite's base time, in canonical ISO form. */
const at = (minutes: number): string => new Date(BASE + minutes * 60_000).toISOString();
const FAR_FUTURE = '2999-01-01T00:00:00.000Z';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const newWorkspace = (): string => `ws-${randomUUID()}`;

/** A unit vector of `dimensions` from the given leading components (the rest are zero). */
function unit(components: readonly number[], dimensions = MODEL.dimensions): Float32Array {
  const vector = new Float32Array(dimensions);
  components.forEach((value, index) => {
    vector[index] = value;
  });
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

/** The unit vector along axis `index`. */
function axis(index: number, dimensions = MODEL.dimensions): Float32Array {
  const components = new Array<number>(index + 1).fill(0);
  components[index] = 1;
  return unit(components, dimensions);
}

function newVersion(overrides: Partial<NewVersion> = {}): NewVersion {
  const content = randomUUID();
  return {
    name: 'report.txt',
    mimeType: 'text/plain',
    sizeBytes: 1234,
    contentHash: sha256(content),
    storageKey: `files/${content}`,
    metadata: {},
    changeReason: null,
    restoredFrom: null,
    createdBy: 'key-contract',
    createdAt: at(0),
    ...overrides,
  };
}

interface DocOptions extends Partial<NewVersion> {
  readonly id?: string;
  readonly source?: string;
}

function chunkInput(
  doc: { readonly id: string; readonly workspaceId: string },
  version: number,
  index: number,
  content: string,
  vector: Float32Array | null = null,
): ChunkInput {
  return {
    id: `${doc.id}:${version}:${index}`,
    documentId: doc.id,
    workspaceId: doc.workspaceId,
    version,
    index,
    content,
    contentHash: sha256(content),
    tokens: content.split(/\s+/).length,
    startOffset: index * 100,
    endOffset: index * 100 + content.length,
    page: index % 2 === 0 ? null : index,
    metadata: { position: index },
    vector,
  };
}

function withVector(chunk: ChunkInput, vector: Float32Array | null): ChunkInput {
  return { ...chunk, vector };
}

function record(chunk: ChunkInput): ChunkRecord {
  const { vector: _vector, ...rest } = chunk;
  return rest;
}

const ids = (hits: readonly SearchHit[]): string[] => hits.map((hit) => hit.chunk.id);
const docIds = (hits: readonly SearchHit[]): string[] => [...new Set(hits.map((hit) => hit.chunk.documentId))].sort();
const listIds = (documents: readonly DocumentRecord[]): string[] => documents.map((doc) => doc.id);
const sorted = (values: readonly string[]): string[] => [...values].sort();

/**
 * The {@link DocumentStore} contract, run against one adapter.
 *
 * `make` is called once per group of tests (twice in all) and must return a store over storage
 * of its own (a fresh file, a fresh index name): the index-model group asserts an empty index
 * and replaces the model. Within the main group every test uses random workspace and document
 * ids, so tests never see each other's data. Scores are compared only by order, except vector
 * scores, which the port fixes as cosine similarity.
 */
export function describeDocumentStoreContract(name: string, make: () => Promise<DocumentStoreHarness>): void {
  describe(`DocumentStore contract: ${name}`, () => {
    let harness: DocumentStoreHarness | undefined;
    let store: DocumentStore;

    beforeAll(async () => {
      harness = await make();
      store = harness.store;
      await store.setIndexModel(MODEL);
    });

    afterAll(async () => {
      await harness?.cleanup();
    });

    async function createDoc(workspaceId: string, options: DocOptions = {}): Promise<DocumentRecord> {
      const { id = randomUUID(), source = 'upload', ...version } = options;
      return store.createDocument({ id, workspaceId, source, firstVersion: newVersion(version) });
    }

    /** Creates a document whose version 1 holds `contents` and completes (is served) at `servedAt`. */
    async function servedDoc(
      workspaceId: string,
      contents: readonly string[],
      options: DocOptions & { servedAt?: string; vectors?: readonly (Float32Array | null)[] } = {},
    ): Promise<DocumentRecord> {
      const { servedAt = at(10), vectors = [], ...docOptions } = options;
      const doc = await createDoc(workspaceId, docOptions);
      await store.putChunks(
        contents.map((content, index) => withVector(chunkInput(doc, 1, index, content), vectors[index] ?? null)),
      );
      const result = await store.completeVersion(doc.id, 1, {
        at: servedAt,
        chunkCount: contents.length,
        tokens: 10,
        embeddingModel: MODEL.model,
      });
      expect(result.served).toBe(true);
      return doc;
    }

    /** Appends a version holding `contents`; completes it at `completeAt` unless that is null. */
    async function addVersion(
      doc: DocumentRecord,
      contents: readonly string[],
      options: { completeAt: string | null; metadata?: Metadata; vectors?: readonly (Float32Array | null)[] },
    ): Promise<number> {
      const created = await store.appendVersion(doc.workspaceId, doc.id, (latest) =>
        newVersion({ name: latest.name, mimeType: latest.mimeType, metadata: options.metadata ?? latest.metadata }),
      );
      await store.putChunks(
        contents.map((content, index) =>
          withVector(chunkInput(doc, created.version, index, content), options.vectors?.[index] ?? null),
        ),
      );
      await store.updateVersion(doc.id, created.version, { status: 'processing' });
      if (options.completeAt !== null) {
        await store.completeVersion(doc.id, created.version, {
          at: options.completeAt,
          chunkCount: contents.length,
          tokens: 10,
          embeddingModel: MODEL.model,
        });
      }
      return created.version;
    }

    function keyword(
      workspaceId: string,
      text: string,
      options: { asOf?: string | null; filters?: SearchFilters; limit?: number } = {},
    ): Promise<SearchHit[]> {
      return store.keywordSearch({
        workspaceId,
        text,
        limit: options.limit ?? 20,
        asOf: options.asOf ?? null,
        filters: options.filters ?? {},
      });
    }

    function nearest(
      workspaceId: string,
      vector: Float32Array,
      options: { asOf?: string | null; filters?: SearchFilters; limit?: number } = {},
    ): Promise<SearchHit[]> {
      return store.vectorSearch({
        workspaceId,
        text: '',
        vector,
        limit: options.limit ?? 20,
        asOf: options.asOf ?? null,
        filters: options.filters ?? {},
      });
    }

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
        const second = harness?.second;
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
        expect(listIds((await store.listDocuments({ workspaceId, limit: 10 })).documents)).toEqual([doc.id]);
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
    });

    describe('appendVersion', () => {
      it('numbers versions from 1 without gaps and hands build the latest version', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId, { name: 'first.txt' });
        const seen: number[] = [];
        const second = await store.appendVersion(workspaceId, doc.id, (latest) => {
          seen.push(latest.version);
          return newVersion({ name: `${latest.name}+`, changeReason: 'typo', createdAt: at(5) });
        });
        expect(second).toMatchObject({
          documentId: doc.id,
          workspaceId,
          version: 2,
          status: 'pending',
          name: 'first.txt+',
          changeReason: 'typo',
          createdAt: at(5),
          servedFrom: null,
        });
        const third = await store.appendVersion(workspaceId, doc.id, (latest) => {
          seen.push(latest.version);
          return newVersion({ name: `${latest.name}+`, restoredFrom: 1 });
        });
        expect(third).toMatchObject({ version: 3, name: 'first.txt++', restoredFrom: 1 });
        expect(seen).toEqual([1, 2]);
        const reread = await store.getDocument(workspaceId, doc.id);
        expect(reread?.latestVersion).toBe(3);
        expect(reread?.latest).toEqual(third);
      });

      it('gives 20 concurrent appends distinct, gap-free version numbers', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, n) =>
            store.appendVersion(workspaceId, doc.id, () => newVersion({ name: `concurrent-${n}.txt` })),
          ),
        );
        const numbers = results.map((version) => version.version).sort((x, y) => x - y);
        expect(numbers).toEqual(Array.from({ length: 20 }, (_, n) => n + 2));
        expect((await store.listVersions(workspaceId, doc.id)).map((version) => version.version)).toEqual(
          Array.from({ length: 21 }, (_, n) => 21 - n),
        );
        expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(21);
      });

      it('rejects a missing, deleted or foreign document with not-found', async () => {
        const workspaceId = newWorkspace();
        const build = () => newVersion();
        await expect(store.appendVersion(workspaceId, randomUUID(), build)).rejects.toMatchObject({
          code: 'not-found',
        });
        const doc = await createDoc(workspaceId);
        await expect(store.appendVersion(newWorkspace(), doc.id, build)).rejects.toMatchObject({ code: 'not-found' });
        await store.softDelete(workspaceId, doc.id, at(5));
        await expect(store.appendVersion(workspaceId, doc.id, build)).rejects.toMatchObject({ code: 'not-found' });
        expect(await store.getVersion(doc.id, 2)).toBeNull();
      });

      it('allocates nothing when build throws', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        await expect(
          store.appendVersion(workspaceId, doc.id, () => {
            throw new Error('metadata rejected');
          }),
        ).rejects.toThrow('metadata rejected');
        expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(1);
        expect((await store.appendVersion(workspaceId, doc.id, () => newVersion())).version).toBe(2);
      });
    });

    describe('completeVersion', () => {
      const result = (when: string, chunkCount = 3) => ({
        at: when,
        chunkCount,
        tokens: 42,
        embeddingModel: MODEL.model,
      });

      it('serves the first completed version from its completion instant', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        expect(await store.completeVersion(doc.id, 1, result(at(5)))).toEqual({ served: true });
        expect(await store.getVersion(doc.id, 1)).toMatchObject({
          status: 'completed',
          completedAt: at(5),
          servedFrom: at(5),
          servedUntil: null,
          chunkCount: 3,
          tokens: 42,
          embeddingModel: MODEL.model,
        });
        const reread = await store.getDocument(workspaceId, doc.id);
        expect(reread?.servedVersion).toBe(1);
        expect(reread?.latest.status).toBe('completed');
      });

      it('hands serving over to the next version at one instant', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        await store.completeVersion(doc.id, 1, result(at(5)));
        await store.appendVersion(workspaceId, doc.id, () => newVersion());
        expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(1);
        expect(await store.completeVersion(doc.id, 2, result(at(9)))).toEqual({ served: true });
        const v1 = await store.getVersion(doc.id, 1);
        const v2 = await store.getVersion(doc.id, 2);
        expect(v1?.servedUntil).toBe(at(9));
        expect(v2?.servedFrom).toBe(at(9));
        expect(v2?.servedUntil).toBeNull();
        expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(2);
      });

      it('never makes an older version current on a stale completion', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        await store.completeVersion(doc.id, 1, result(at(5)));
        await store.appendVersion(workspaceId, doc.id, () => newVersion());
        await store.appendVersion(workspaceId, doc.id, () => newVersion());
        expect(await store.completeVersion(doc.id, 3, result(at(8)))).toEqual({ served: true });
        expect(await store.completeVersion(doc.id, 2, result(at(9)))).toEqual({ served: false });
        expect(await store.getVersion(doc.id, 2)).toMatchObject({
          status: 'completed',
          servedFrom: null,
          servedUntil: null,
        });
        expect(await store.getVersion(doc.id, 3)).toMatchObject({ servedFrom: at(8), servedUntil: null });
        expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(8));
        expect((await store.getDocument(workspaceId, doc.id))?.servedVersion).toBe(3);
      });

      it('changes nothing when a completion is repeated', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        await store.completeVersion(doc.id, 1, result(at(5)));
        await store.appendVersion(workspaceId, doc.id, () => newVersion());
        await store.appendVersion(workspaceId, doc.id, () => newVersion());
        await store.completeVersion(doc.id, 3, result(at(8)));
        await store.completeVersion(doc.id, 2, result(at(9)));
        const before = await store.listVersions(workspaceId, doc.id);
        const documentBefore = await store.getDocument(workspaceId, doc.id);
        expect(await store.completeVersion(doc.id, 1, result(at(20), 99))).toEqual({ served: true });
        expect(await store.completeVersion(doc.id, 3, result(at(21), 99))).toEqual({ served: true });
        expect(await store.completeVersion(doc.id, 2, result(at(22), 99))).toEqual({ served: false });
        expect(await store.listVersions(workspaceId, doc.id)).toEqual(before);
        expect(await store.getDocument(workspaceId, doc.id)).toEqual(documentBefore);
      });

      it('does not serve a version that completes after the document was deleted', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        await store.softDelete(workspaceId, doc.id, at(3));
        expect(await store.completeVersion(doc.id, 1, result(at(5)))).toEqual({ served: false });
        expect((await store.getVersion(doc.id, 1))?.servedFrom).toBeNull();
        expect(await keyword(workspaceId, 'anything', { asOf: at(6) })).toEqual([]);
      });
    });

    describe('chunks', () => {
      it('upserts chunks by id: a replay changes nothing, a rewrite replaces', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        const chunks = ['first part', 'second part', 'third part'].map((text, index) =>
          chunkInput(doc, 1, index, text),
        );
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
        await expect(
          store.setChunkVectors(MODEL.model, new Map([[`${doc.id}:1:0`, axis(0, 4)]])),
        ).rejects.toMatchObject({ code: 'model-mismatch' });
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

    describe('vector cache', () => {
      it('returns cached vectors by model and content hash', async () => {
        const model = `contract/cache-${randomUUID()}`;
        const [h1, h2, h3] = [randomUUID(), randomUUID(), randomUUID()].map(sha256) as [string, string, string];
        await store.putCachedVectors(
          model,
          new Map([
            [h1, axis(0)],
            [h2, unit([1, 2, 3])],
          ]),
        );
        const found = await store.getCachedVectors(model, [h1, h2, h3]);
        expect(sorted([...found.keys()])).toEqual(sorted([h1, h2]));
        expect(Array.from(found.get(h2)!)).toEqual(Array.from(unit([1, 2, 3])));
        expect((await store.getCachedVectors(`${model}-other`, [h1, h2])).size).toBe(0);
        expect((await store.getCachedVectors(model, [])).size).toBe(0);

        await store.putCachedVectors(model, new Map([[h1, axis(5)]]));
        expect(Array.from((await store.getCachedVectors(model, [h1])).get(h1)!)).toEqual(Array.from(axis(5)));
      });
    });

    describe('keyword search', () => {
      it('finds a word and returns the chunk with its version’s name, metadata and mime type', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(
          workspaceId,
          ['The quick brown fox jumps over the lazy dog', 'Tides of the ocean'],
          {
            name: 'animals.md',
            mimeType: 'text/markdown',
            metadata: { team: 'zoo' },
          },
        );
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
    });

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
    });

    describe('soft delete and purge', () => {
      it('hides a deleted document from get, list and current search; as-of before the deletion still sees it', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(workspaceId, ['nebula survey notes'], { vectors: [axis(3)], servedAt: at(10) });
        const keep = await createDoc(workspaceId);
        const deleted = await store.softDelete(workspaceId, doc.id, at(20));
        expect(deleted).toMatchObject({ id: doc.id, deletedAt: at(20), servedVersion: null });

        expect(await store.getDocument(workspaceId, doc.id)).toBeNull();
        const listed = await store.listDocuments({ workspaceId, limit: 10 });
        expect(listIds(listed.documents)).toEqual([keep.id]);
        expect(listed.total).toBe(1);
        expect(await keyword(workspaceId, 'nebula')).toEqual([]);
        expect(await nearest(workspaceId, axis(3))).toEqual([]);
        expect(await keyword(workspaceId, 'nebula', { asOf: FAR_FUTURE })).toEqual([]);

        expect(ids(await keyword(workspaceId, 'nebula', { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
        expect(ids(await nearest(workspaceId, axis(3), { asOf: at(15) }))).toEqual([`${doc.id}:1:0`]);
        expect(await keyword(workspaceId, 'nebula', { asOf: at(20) })).toEqual([]);

        expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(20));
        expect((await store.listVersions(workspaceId, doc.id)).map((version) => version.version)).toEqual([1]);
        expect(await store.softDelete(workspaceId, doc.id, at(30))).toBeNull();
        expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe(at(20));
      });

      it('does not delete another workspace’s document', async () => {
        const workspaceId = newWorkspace();
        const doc = await createDoc(workspaceId);
        expect(await store.softDelete(newWorkspace(), doc.id, at(5))).toBeNull();
        expect(await store.softDelete(workspaceId, randomUUID(), at(5))).toBeNull();
        expect(await store.purge(newWorkspace(), doc.id)).toBe(false);
        expect(await store.getDocument(workspaceId, doc.id)).toEqual(doc);
      });

      it('purges a document, its versions and chunks from everything', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(workspaceId, ['comet trajectory'], { vectors: [axis(4)], servedAt: at(10) });
        await addVersion(doc, ['comet revised trajectory'], { completeAt: at(20), vectors: [axis(5)] });
        expect(await store.purge(workspaceId, doc.id)).toBe(true);

        expect(await store.getDocument(workspaceId, doc.id)).toBeNull();
        expect(await store.listVersions(workspaceId, doc.id)).toEqual([]);
        expect(await store.getVersion(doc.id, 1)).toBeNull();
        expect(await store.getChunk(`${doc.id}:2:0`)).toBeNull();
        expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(0);
        expect(await keyword(workspaceId, 'comet')).toEqual([]);
        expect(await keyword(workspaceId, 'comet', { asOf: at(15) })).toEqual([]);
        expect(await nearest(workspaceId, axis(4), { asOf: at(15) })).toEqual([]);
        expect((await store.listDocuments({ workspaceId, limit: 10 })).total).toBe(0);
        expect(await store.purge(workspaceId, doc.id)).toBe(false);
      });

      it('purges a soft-deleted document', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(workspaceId, ['meteor shower'], { servedAt: at(10) });
        await store.softDelete(workspaceId, doc.id, at(20));
        expect(await store.purge(workspaceId, doc.id)).toBe(true);
        expect(await store.getVersion(doc.id, 1)).toBeNull();
        expect(await keyword(workspaceId, 'meteor', { asOf: at(15) })).toEqual([]);
      });
    });

    describe('retention', () => {
      it('lists versions no longer served before the cutoff, archives them and reports the horizon', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(workspaceId, ['glacier report'], { servedAt: at(10) });
        await addVersion(doc, ['glacier report revised'], { completeAt: at(20) });
        expect(await store.listExpiredVersions(workspaceId, at(20))).toEqual([]);
        const expired = await store.listExpiredVersions(workspaceId, at(21));
        expect(expired.map((version) => [version.documentId, version.version])).toEqual([[doc.id, 1]]);
        expect(await store.listExpiredVersions(newWorkspace(), at(21))).toEqual([]);
        expect(await store.archivedHorizon(workspaceId)).toBeNull();

        await store.archiveVersion(doc.id, 1, at(30));
        expect(await store.getVersion(doc.id, 1)).toMatchObject({ archivedAt: at(30), servedUntil: at(20) });
        expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 10 })).total).toBe(0);
        expect(await store.listExpiredVersions(workspaceId, at(21))).toEqual([]);
        expect(await store.archivedHorizon(workspaceId)).toBe(at(20));
        expect(await keyword(workspaceId, 'glacier', { asOf: at(15) })).toEqual([]);
        expect(ids(await keyword(workspaceId, 'glacier'))).toEqual([`${doc.id}:2:0`]);

        await store.archiveVersion(doc.id, 1, at(40));
        expect((await store.getVersion(doc.id, 1))?.archivedAt).toBe(at(30));
        expect(await store.archivedHorizon(workspaceId)).toBe(at(20));
      });

      it('counts a deleted document’s last served version as expired', async () => {
        const workspaceId = newWorkspace();
        const doc = await servedDoc(workspaceId, ['iceberg'], { servedAt: at(10) });
        await store.softDelete(workspaceId, doc.id, at(25));
        expect(await store.listExpiredVersions(workspaceId, at(25))).toEqual([]);
        expect((await store.listExpiredVersions(workspaceId, at(26))).map((version) => version.version)).toEqual([1]);
      });

      it('lists the workspaces that hold documents', async () => {
        const workspaceId = newWorkspace();
        const unused = newWorkspace();
        await createDoc(workspaceId);
        const workspaces = await store.listWorkspaces();
        expect(workspaces).toContain(workspaceId);
        expect(workspaces).not.toContain(unused);
      });

      it('counts documents not deleted by their latest status, over every workspace', async () => {
        const before = await store.countDocumentsByStatus();
        await createDoc(newWorkspace());
        await servedDoc(newWorkspace(), ['counted once']);
        const deletedIn = newWorkspace();
        const deleted = await servedDoc(deletedIn, ['deleted, not counted']);
        await store.softDelete(deletedIn, deleted.id, at(30));
        const after = await store.countDocumentsByStatus();
        expect(Object.keys(after).sort()).toEqual(['completed', 'failed', 'pending', 'processing']);
        expect(after.pending - before.pending).toBe(1);
        expect(after.completed - before.completed).toBe(1);
        expect(after.failed - before.failed).toBe(0);
      });

      it('answers ping', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });
  });

  describe(`DocumentStore contract: ${name} (index model)`, () => {
    let harness: DocumentStoreHarness | undefined;
    let store: DocumentStore;

    beforeAll(async () => {
      harness = await make();
      store = harness.store;
    });

    afterAll(async () => {
      await harness?.cleanup();
    });

    it('sets the model on an empty index and switches with replace, dropping every vector', async () => {
      const workspaceId = newWorkspace();
      expect(await store.getIndexModel()).toBeNull();
      const doc = await store.createDocument({
        id: randomUUID(),
        workspaceId,
        source: 'upload',
        firstVersion: newVersion(),
      });
      await expect(store.putChunks([withVector(chunkInput(doc, 1, 0, 'early vector'), axis(0))])).rejects.toMatchObject(
        { code: 'model-mismatch' },
      );

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
        const doc = await store.createDocument({
          id: randomUUID(),
          workspaceId,
          source: 'upload',
          firstVersion: newVersion(),
        });
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
  });
}
