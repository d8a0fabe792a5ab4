import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DocumentRecord } from '../../core/model/document-records.model.ts';
import type { DocumentStore, SearchHit } from '../../core/ports/document-store/document-store.port.ts';
import { runningIndexBuilds } from '../../core/ports/document-store/sqlite/sqlite-vector-index-build.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { createPlainDocument, plainChunk, putChunksAndComplete } from '../support/document-fixtures.ts';
import { randomVectors } from '../support/random-vectors.ts';

/**
 * A vector index too large to build before a query (more vectors than `syncBelow`, lowered here) is
 * built in a worker thread: vector queries are answered at once by the exact scan meanwhile, then
 * by the index, which holds every write made during its build; closing the store stops the build.
 */

const DIMS = 24;
const MODEL = { model: 'ann-build-test/random-24d', dimensions: DIMS };
const CHUNKS_PER_DOC = 5;
const DOCS = 300;
const BUILT = 'vector queries use it';

let dir: string;
let file: string;
/** The store without the vector index, which writes the data set and answers exactly. */
let exact: DocumentStore;
let indexed: DocumentStore | null = null;
let messages: string[];
const vector = randomVectors(3, DIMS);

/** A store with the index, whose builds above 500 vectors run in the background. */
const openIndexed = (target = file) =>
  createSqliteDocumentStore({
    file: target,
    vectorIndex: {
      exactBelow: 0,
      expansionSearch: 400,
      quantization: 'f32',
      syncBelow: 500,
      log: (message) => messages.push(message),
    },
  });

async function addDocument(store: DocumentStore, workspaceId: string, v = vector()): Promise<DocumentRecord> {
  const doc = await createPlainDocument(store, workspaceId);
  await putChunksAndComplete(
    store,
    Array.from({ length: CHUNKS_PER_DOC }, (_, i) =>
      plainChunk(doc, 1, i, `chunk ${i} of ${doc.id}`, i === 0 ? v : vector()),
    ),
    { embeddingModel: MODEL.model },
  );
  return doc;
}

const query = (q: Float32Array) => ({
  workspaceId: 'ws',
  text: '',
  vector: q,
  limit: 10,
  asOf: null,
  filters: {},
});
const ids = (hits: SearchHit[]) => hits.map((hit) => hit.chunk.id);
const built = () => messages.filter((m) => m.includes(BUILT));

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-ann-build-'));
  file = path.join(dir, 'documents.db');
  messages = [];
  exact = createSqliteDocumentStore({ file });
  await exact.setIndexModel(MODEL);
  for (let d = 0; d < DOCS; d += 1) await addDocument(exact, 'ws');
});

afterEach(async () => {
  await indexed?.close();
  indexed = null;
  await exact.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SQLite HNSW vector index built in the background', () => {
  it('answers at once with the exact results while it is built, then answers from it the same', async () => {
    indexed = openIndexed();
    const probe = randomVectors(17, DIMS);
    const first = probe();
    const during = await indexed.vectorSearch(query(first));
    // Answered by the exact scan: the same chunks and scores.
    expect(during).toEqual(await exact.vectorSearch(query(first)));
    expect(during).toHaveLength(10);
    expect(messages).toEqual([
      expect.stringContaining(`in the background (no saved index): ${DOCS * CHUNKS_PER_DOC} vectors`),
    ]);
    expect(built()).toEqual([]);

    await vi.waitFor(() => expect(built()).toHaveLength(1), { timeout: 60_000, interval: 50 });
    expect(built()[0]).toContain(`${DOCS * CHUNKS_PER_DOC} vectors of ${MODEL.model}`);
    for (const q of [first, probe(), probe(), probe(), probe()]) {
      expect(ids(await indexed.vectorSearch(query(q)))).toEqual(ids(await exact.vectorSearch(query(q))));
    }
    // The thread saved it as the index saves itself: one graph file, named by the metadata.
    const meta = JSON.parse(await readFile(`${file}.vectors.json`, 'utf8')) as { file: string; model: string };
    expect(meta.model).toBe(MODEL.model);
    expect(
      (await readdir(dir)).filter((name) => name.includes('.vectors.') && name !== 'documents.db.vectors.json'),
    ).toEqual([meta.file]);

    // Reopened, the saved index is loaded: nothing is built again.
    await indexed.close();
    messages = [];
    indexed = openIndexed();
    expect(ids(await indexed.vectorSearch(query(first)))).toEqual(ids(during));
    expect(messages).toEqual([]);
  });

  it('holds the writes made while it was built: new chunks, a deleted and a purged document', async () => {
    indexed = openIndexed();
    const docs: DocumentRecord[] = [];
    const targets = randomVectors(23, DIMS);
    const written: { doc: DocumentRecord; target: Float32Array }[] = [];
    await indexed.vectorSearch(query(vector()));
    // Writes go on while the thread builds, some before its snapshot, the last ones after it.
    while (built().length === 0) {
      const target = targets();
      const doc = await addDocument(indexed, 'ws', target);
      written.push({ doc, target });
      docs.push(doc);
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (written.length > 2000) throw new Error('the build never ended');
    }
    expect(written.length).toBeGreaterThan(0);
    const deleted = written[written.length - 1] as { doc: DocumentRecord; target: Float32Array };
    const purged = written[0] as { doc: DocumentRecord; target: Float32Array };
    await indexed.softDelete('ws', deleted.doc.id, new Date().toISOString());
    await indexed.purge('ws', purged.doc.id);

    for (const { doc, target } of written.slice(1, -1)) {
      expect((await indexed.vectorSearch(query(target)))[0]?.chunk.id).toBe(`${doc.id}:1:0`);
    }
    for (const gone of [deleted, purged]) {
      const found = await indexed.vectorSearch(query(gone.target));
      expect(found.map((hit) => hit.chunk.documentId)).not.toContain(gone.doc.id);
      expect(ids(found)).toEqual(ids(await exact.vectorSearch(query(gone.target))));
    }
  });

  it('is stopped by closing the store: no thread left running, no file left behind', async () => {
    indexed = openIndexed();
    await indexed.vectorSearch(query(vector()));
    expect(runningIndexBuilds()).toBe(1);
    await indexed.close();
    indexed = null;
    expect(runningIndexBuilds()).toBe(0);
    expect(built()).toEqual([]);
    expect((await readdir(dir)).filter((name) => name.includes('.vectors.'))).toEqual([]);

    // The next open builds it again and answers meanwhile.
    indexed = openIndexed();
    const q = vector();
    expect(ids(await indexed.vectorSearch(query(q)))).toEqual(ids(await exact.vectorSearch(query(q))));
    await vi.waitFor(() => expect(built()).toHaveLength(1), { timeout: 60_000, interval: 50 });
  });

  it('reports a build that failed, keeps answering exactly and does not start it again at once', async () => {
    // A directory where the saved index's metadata goes: the thread cannot name the graph it saved.
    await mkdir(`${file}.vectors.json`);
    await writeFile(path.join(`${file}.vectors.json`, 'keep'), '');
    indexed = openIndexed();
    const q = vector();
    const truth = ids(await exact.vectorSearch(query(q)));
    expect(ids(await indexed.vectorSearch(query(q)))).toEqual(truth);
    expect(await indexed.ping()).toEqual({ degraded: expect.stringContaining('vector index: being built') });
    await vi.waitFor(() => expect(messages.filter((m) => m.includes('failed'))).toHaveLength(1), {
      timeout: 60_000,
      interval: 50,
    });
    expect(messages[1]).toMatch(
      /building in the background failed .*; vector queries scan exactly, it is tried again in 60 s/,
    );
    for (let i = 0; i < 3; i += 1) expect(ids(await indexed.vectorSearch(query(q)))).toEqual(truth);
    expect(messages).toHaveLength(2);
    expect(runningIndexBuilds()).toBe(0);
    expect(await indexed.ping()).toEqual({ degraded: expect.stringContaining('vector index: building it failed') });
    // The graph it saved is removed with the temporary metadata file.
    expect((await readdir(dir)).filter((name) => name.includes('.vectors.'))).toEqual(['documents.db.vectors.json']);
  });

  it('starts building at open, before any query, when told to (the serving process)', async () => {
    indexed = createSqliteDocumentStore({
      file,
      vectorIndex: {
        exactBelow: 0,
        expansionSearch: 400,
        syncBelow: 500,
        openAtStart: true,
        log: (m) => messages.push(m),
      },
    });
    await vi.waitFor(() => expect(built()).toHaveLength(1), { timeout: 60_000, interval: 50 });
    expect(messages[0]).toContain('in the background (no saved index)');
    const q = vector();
    expect((await indexed.vectorSearch(query(q)))[0]?.chunk.id).toBe((await exact.vectorSearch(query(q)))[0]?.chunk.id);
    expect(messages).toHaveLength(2);
  });

  it('is built before the query, as before, for an in-memory database', async () => {
    const memory = createSqliteDocumentStore({
      file: ':memory:',
      vectorIndex: { exactBelow: 0, expansionSearch: 400, syncBelow: 500, log: (message) => messages.push(message) },
    });
    try {
      await memory.setIndexModel(MODEL);
      for (let d = 0; d < 120; d += 1) await addDocument(memory, 'ws');
      await memory.vectorSearch(query(vector()));
      expect(messages).toEqual([
        expect.stringMatching(/^vector index: rebuilt from the database \(no saved index\): 600 vectors/),
      ]);
      expect(runningIndexBuilds()).toBe(0);
    } finally {
      await memory.close();
    }
  });
});
