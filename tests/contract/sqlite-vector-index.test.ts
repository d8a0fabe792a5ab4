import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../core/model/document-records.model.ts';
import type { DocumentStore, StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { createPlainDocument, plainChunk, plainVersion, putChunksAndComplete } from '../support/document-fixtures.ts';
import { randomVectors } from '../support/random-vectors.ts';

/**
 * The SQLite store's HNSW vector index against the same store scanning exactly, on one database
 * file: the same nearest chunks for unfiltered and filtered queries, after every kind of write,
 * and after restarts with a saved, missing or damaged index file.
 */

const DIMS = 24;
const MODEL = { model: 'ann-test/random-24d', dimensions: DIMS };
const CHUNKS_PER_DOC = 5;

let dir: string;
let file: string;
let indexed: DocumentStore;
let exact: DocumentStore;
const vector = randomVectors(7, DIMS);

const openIndexed = (settings: { quantization?: 'i8' | 'f16' | 'f32'; log?: (message: string) => void } = {}) =>
  createSqliteDocumentStore({ file, vectorIndex: { exactBelow: 0, expansionSearch: 64, ...settings } });

async function addDocument(
  store: DocumentStore,
  workspaceId: string,
  metadata: Record<string, unknown> = {},
): Promise<DocumentRecord> {
  const doc = await createPlainDocument(store, workspaceId, {
    metadata,
    mimeType: metadata.pdf ? 'application/pdf' : 'text/plain',
  });
  await putChunksAndComplete(
    store,
    Array.from({ length: CHUNKS_PER_DOC }, (_, i) => plainChunk(doc, 1, i, `chunk ${i} of ${doc.id}`, vector())),
    { embeddingModel: MODEL.model },
  );
  return doc;
}

const query = (workspaceId: string, q: Float32Array, extra: Partial<StoreSearchQuery> = {}) => ({
  workspaceId,
  text: '',
  vector: q,
  limit: 10,
  asOf: null,
  filters: {},
  ...extra,
});

/** The ids both stores answer, and how many of the exact top 10 the index found. */
async function compare(workspaceId: string, q: Float32Array, extra: Partial<StoreSearchQuery> = {}) {
  const truth = (await exact.vectorSearch(query(workspaceId, q, extra))).map((h) => h.chunk.id);
  const found = (await indexed.vectorSearch(query(workspaceId, q, extra))).map((h) => h.chunk.id);
  return { truth, found, recall: truth.filter((id) => found.includes(id)).length / Math.max(1, truth.length) };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-ann-'));
  file = path.join(dir, 'documents.db');
  indexed = openIndexed();
  exact = createSqliteDocumentStore({ file });
  await indexed.setIndexModel(MODEL);
});

afterEach(async () => {
  await indexed.close();
  await exact.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SQLite HNSW vector index', () => {
  it('finds the exact nearest chunks, also in a workspace holding 1 % of them and under filters', async () => {
    const big: DocumentRecord[] = [];
    for (let d = 0; d < 400; d += 1) big.push(await addDocument(indexed, 'ws-big', { team: d % 2 === 0 ? 'a' : 'b' }));
    for (let d = 0; d < 4; d += 1) await addDocument(indexed, 'ws-small', { pdf: d % 2 === 0 });
    const probe = randomVectors(99, DIMS);
    let recall = 0;
    const rounds = 20;
    for (let i = 0; i < rounds; i += 1) {
      const q = probe();
      recall += (await compare('ws-big', q)).recall;
      // Filtered queries never lose a match: the small workspace, a metadata value, a MIME type.
      const small = await compare('ws-small', q);
      expect(small.found).toEqual(small.truth);
      expect(small.truth).toHaveLength(10);
      const team = await compare('ws-big', q, { filters: { metadata: { team: ['b'] } } });
      expect(team.recall).toBeGreaterThanOrEqual(0.9);
      const pdf = await compare('ws-small', q, { filters: { mimeTypes: ['application/pdf'] } });
      expect(pdf.found).toEqual(pdf.truth);
      const docs = await compare('ws-big', q, { filters: { documentIds: [big[3]?.id as string] } });
      expect(docs.found).toEqual(docs.truth);
    }
    expect(recall / rounds).toBeGreaterThanOrEqual(0.97);
  });

  it('follows deletes, purges, new versions and a new index model at once', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 60; d += 1) docs.push(await addDocument(indexed, 'ws'));
    const first = docs[0] as DocumentRecord;
    const target = vector();
    // Version 2 of the first document holds the exact query vector.
    await indexed.appendVersion('ws', first.id, () => plainVersion());
    await putChunksAndComplete(indexed, [plainChunk(first, 2, 0, 'the target', target)], {
      at: '2024-05-02T10:00:00.000Z',
      embeddingModel: MODEL.model,
    });
    expect((await indexed.vectorSearch(query('ws', target)))[0]?.chunk.id).toBe(`${first.id}:2:0`);
    // As of before version 2, version 1 is served again.
    const before = await compare('ws', target, { asOf: '2024-05-01T12:00:00.000Z' });
    expect(before.found).toEqual(before.truth);
    expect(before.found.some((id) => id.startsWith(`${first.id}:1:`) || !id.startsWith(first.id))).toBe(true);
    // Deleted: gone from search; purged: gone from the index.
    await indexed.softDelete('ws', first.id, '2024-05-03T10:00:00.000Z');
    expect((await indexed.vectorSearch(query('ws', target))).map((h) => h.chunk.documentId)).not.toContain(first.id);
    await indexed.purge('ws', (docs[1] as DocumentRecord).id);
    const after = await compare('ws', target);
    expect(after.found).toEqual(after.truth);
    // Another model: the old vectors no longer answer.
    await indexed.setIndexModel({ model: 'ann-test/other', dimensions: DIMS }, { replace: true });
    expect(await indexed.vectorSearch(query('ws', target))).toEqual([]);
  });

  it('fills a page of nearest chunks after most documents stop being served, though earlier queries all passed', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 800; d += 1) docs.push(await addDocument(indexed, 'ws'));
    const probe = randomVectors(5, DIMS);
    // Every candidate passes: the store learns to ask the index for few more than the page.
    for (let i = 0; i < 5; i += 1) {
      const { found, recall } = await compare('ws', probe(), { limit: 100 });
      expect(found).toHaveLength(100);
      expect(recall).toBeGreaterThanOrEqual(0.95);
    }
    // Then half the documents are deleted: half the nearest candidates no longer pass.
    for (const doc of docs.filter((_, i) => i % 2 === 0))
      await indexed.softDelete('ws', doc.id, new Date().toISOString());
    for (let i = 0; i < 5; i += 1) {
      const { found, truth, recall } = await compare('ws', probe(), { limit: 100 });
      expect(truth).toHaveLength(100);
      expect(found).toHaveLength(100);
      expect(recall).toBeGreaterThanOrEqual(0.95);
    }
  });

  it('answers concurrent queries, walked together, as it answers each alone', async () => {
    for (let d = 0; d < 200; d += 1) await addDocument(indexed, d % 4 === 0 ? 'ws-other' : 'ws');
    const probe = randomVectors(11, DIMS);
    const asked = Array.from({ length: 12 }, (_, i) => ({
      workspaceId: i % 3 === 0 ? 'ws-other' : 'ws',
      vector: probe(),
      limit: i % 2 === 0 ? 10 : 150,
    }));
    const ids = (hits: Awaited<ReturnType<DocumentStore['vectorSearch']>>) => hits.map((h) => h.chunk.id);
    const alone: string[][] = [];
    for (const a of asked)
      alone.push(ids(await indexed.vectorSearch(query(a.workspaceId, a.vector, { limit: a.limit }))));
    const together = await Promise.all(
      asked.map((a) => indexed.vectorSearch(query(a.workspaceId, a.vector, { limit: a.limit }))),
    );
    expect(together.map(ids)).toEqual(alone);
    let recall = 0;
    for (const [i, a] of asked.entries()) {
      const truth = ids(await exact.vectorSearch(query(a.workspaceId, a.vector, { limit: a.limit })));
      const found = alone[i] as string[];
      expect(found).toHaveLength(truth.length);
      recall += found.filter((id) => truth.includes(id)).length / truth.length;
    }
    expect(recall / asked.length).toBeGreaterThanOrEqual(0.95);
  });

  it('sees writes made through another connection to the same file', async () => {
    for (let d = 0; d < 20; d += 1) await addDocument(indexed, 'ws');
    await indexed.vectorSearch(query('ws', vector()));
    const target = vector();
    const doc = await createPlainDocument(exact, 'ws');
    await putChunksAndComplete(exact, [plainChunk(doc, 1, 0, 'written elsewhere', target)], {
      embeddingModel: MODEL.model,
    });
    expect((await indexed.vectorSearch(query('ws', target)))[0]?.chunk.id).toBe(`${doc.id}:1:0`);
  });

  it('is saved at close, reused at open, and rebuilt when its file is missing or damaged', async () => {
    for (let d = 0; d < 40; d += 1) await addDocument(indexed, 'ws');
    const q = vector();
    const expected = (await indexed.vectorSearch(query('ws', q))).map((h) => h.chunk.id);
    await indexed.close();
    const saved = (await readdir(dir)).filter((name) => name.includes('.vectors.'));
    expect(saved.some((name) => name.endsWith('.usearch'))).toBe(true);
    expect(saved).toContain('documents.db.vectors.json');

    // Reopened, with a write made while it was closed.
    const late = await addDocument(exact, 'ws');
    indexed = openIndexed();
    const reopened = await compare('ws', q);
    expect(reopened.found).toEqual(reopened.truth);
    expect(reopened.found.filter((id) => !id.startsWith(late.id))).toEqual(
      expected.filter((id) => reopened.found.includes(id)),
    );

    // A damaged index file is rebuilt from the database.
    await indexed.close();
    for (const name of await readdir(dir)) {
      if (name.endsWith('.usearch')) await writeFile(path.join(dir, name), 'not an index');
    }
    indexed = openIndexed();
    const repaired = await compare('ws', q);
    expect(repaired.found).toEqual(repaired.truth);

    // So is a missing one.
    await indexed.close();
    for (const name of await readdir(dir)) if (name.includes('.vectors.')) await rm(path.join(dir, name));
    indexed = openIndexed();
    const rebuilt = await compare('ws', q);
    expect(rebuilt.found).toEqual(rebuilt.truth);
  });

  it('scores the candidates of its int8 graph with the full vectors: the nearest chunk and its exact score', async () => {
    for (let d = 0; d < 300; d += 1) await addDocument(indexed, 'ws');
    const doc = await createPlainDocument(indexed, 'ws');
    const target = vector();
    await putChunksAndComplete(indexed, [plainChunk(doc, 1, 0, 'the target', target)], {
      embeddingModel: MODEL.model,
    });
    // A query a little off the target: the target is still its nearest chunk, by a clear margin.
    const noise = randomVectors(5, DIMS)();
    const q = target.map((x, i) => x + 0.05 * (noise[i] as number));
    const found = await indexed.vectorSearch(query('ws', q));
    const truth = await exact.vectorSearch(query('ws', q));
    expect(found[0]?.chunk.id).toBe(`${doc.id}:1:0`);
    expect(found.map((h) => h.chunk.id)).toEqual(truth.map((h) => h.chunk.id));
    // Scores are the exact cosine of the stored vectors, not the quantized distances.
    found.forEach((hit, i) => {
      expect(hit.score).toBe(truth[i]?.score);
    });
  });

  it('rebuilds an index saved with another quantization (or in the format before it was recorded) instead of loading it', async () => {
    const messages: string[] = [];
    const log = (message: string) => messages.push(message);
    await indexed.close();
    indexed = openIndexed({ quantization: 'f32' });
    for (let d = 0; d < 40; d += 1) await addDocument(indexed, 'ws');
    const q = vector();
    await indexed.vectorSearch(query('ws', q));
    await indexed.close();
    const metaFile = path.join(dir, 'documents.db.vectors.json');
    const f32Meta = JSON.parse(await readFile(metaFile, 'utf8')) as Record<string, unknown>;
    expect(f32Meta.quantization).toBe('f32');
    const f32Bytes = (await stat(path.join(dir, f32Meta.file as string))).size;

    // The format before quantization was recorded: no quantization or connectivity, f32 vectors.
    const { quantization: _q, connectivity: _c, ...oldMeta } = f32Meta;
    await writeFile(metaFile, JSON.stringify(oldMeta));
    indexed = openIndexed({ log });
    const rebuilt = await compare('ws', q);
    expect(rebuilt.found).toEqual(rebuilt.truth);
    expect(messages.filter((m) => m.includes('rebuilt'))).toEqual([expect.stringContaining('stores f32 vectors')]);
    await indexed.close();
    const i8Meta = JSON.parse(await readFile(metaFile, 'utf8')) as Record<string, unknown>;
    expect(i8Meta.quantization).toBe('i8');
    expect(i8Meta.file).not.toBe(f32Meta.file);
    expect((await stat(path.join(dir, i8Meta.file as string))).size).toBeLessThan(f32Bytes);

    // The same settings load it; another quantization rebuilds it again.
    messages.length = 0;
    indexed = openIndexed({ log });
    expect((await compare('ws', q)).recall).toBe(1);
    expect(messages.filter((m) => m.includes('rebuilt'))).toEqual([]);
    await indexed.close();
    indexed = openIndexed({ quantization: 'f16', log });
    expect((await compare('ws', q)).recall).toBe(1);
    expect(messages.filter((m) => m.includes('rebuilt'))).toEqual([expect.stringContaining('stores i8 vectors')]);
  });
});
