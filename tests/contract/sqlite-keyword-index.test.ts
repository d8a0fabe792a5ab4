import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../core/model/document-records.model.ts';
import type { DocumentStore, StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { createPlainDocument, plainChunk, plainVersion, putChunksAndComplete } from '../support/document-fixtures.ts';
import { seededRandom } from '../support/seeded-prose.ts';

/**
 * The SQLite store's keyword index against the same store querying FTS5 exactly, on one database
 * file: the same matching chunks for unfiltered and filtered queries and as of past instants,
 * after every kind of write, and after restarts with a saved, stale, missing or damaged index.
 */

const WORDS = [
  'lantern',
  'harbour',
  'granite',
  'meadow',
  'compass',
  'orchard',
  'falcon',
  'glacier',
  'velvet',
  'thunder',
  'quarry',
  'saddle',
];

let dir: string;
let file: string;
let indexed: DocumentStore;
let exact: DocumentStore;
let logged: string[];
const next = seededRandom(5);

const openIndexed = (syncBelow = 100_000, follow = false, exactBelow = 0) =>
  createSqliteDocumentStore({
    file,
    keywordIndex: { syncBelow, follow, exactBelow, log: (message) => logged.push(message) },
  });

/** Waits (up to 10 s) until a logged line includes `text`. */
async function logs(text: string): Promise<boolean> {
  for (let i = 0; i < 200; i += 1) {
    if (logged.some((line) => line.includes(text))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Polls `check` every `everyMs` (up to 10 s) until it holds. */
async function until(check: () => Promise<boolean>, everyMs = 50): Promise<boolean> {
  for (let waited = 0; waited < 10_000; waited += everyMs) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}

/** A sentence of 6 to 12 words of {@link WORDS}. */
function sentence(): string {
  const length = 6 + Math.floor(next() * 7);
  return Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

async function addDocument(
  store: DocumentStore,
  workspaceId: string,
  options: { metadata?: Record<string, unknown>; mimeType?: string; createdAt?: string; chunks?: number } = {},
): Promise<DocumentRecord> {
  const doc = await createPlainDocument(store, workspaceId, {
    metadata: options.metadata ?? {},
    mimeType: options.mimeType ?? 'text/plain',
    ...(options.createdAt ? { createdAt: options.createdAt } : {}),
  });
  const chunks = Array.from({ length: options.chunks ?? 3 }, (_, i) => plainChunk(doc, 1, i, sentence()));
  await putChunksAndComplete(store, chunks, { embeddingModel: null });
  return doc;
}

const query = (workspaceId: string, text: string, extra: Partial<StoreSearchQuery> = {}): StoreSearchQuery => ({
  workspaceId,
  text,
  limit: 1000,
  asOf: null,
  filters: {},
  ...extra,
});

/** Every match of both stores (the limit exceeds the matches), as sorted ids, and the index's scores. */
async function compare(workspaceId: string, text: string, extra: Partial<StoreSearchQuery> = {}) {
  const truth = (await exact.keywordSearch(query(workspaceId, text, extra))).map((h) => h.chunk.id).sort();
  const hits = await indexed.keywordSearch(query(workspaceId, text, extra));
  return { truth, found: hits.map((h) => h.chunk.id).sort(), scores: hits.map((h) => h.score) };
}

async function expectSame(workspaceId: string, text: string, extra: Partial<StoreSearchQuery> = {}) {
  const { truth, found, scores } = await compare(workspaceId, text, extra);
  expect(found).toEqual(truth);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  return truth;
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-keywords-'));
  file = path.join(dir, 'documents.db');
  logged = [];
  indexed = openIndexed();
  exact = createSqliteDocumentStore({ file });
});

afterEach(async () => {
  await indexed.close();
  await exact.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SQLite keyword index', () => {
  it('finds every match the exact path finds, under every filter, and honours the limit by score', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 30; d += 1) {
      docs.push(
        await addDocument(indexed, 'ws', {
          metadata: { team: d % 3 === 0 ? 'core' : 'search', tags: d % 5 === 0 ? ['red', 2] : [] },
          mimeType: d % 2 === 0 ? 'text/plain' : 'application/pdf',
          createdAt: `2024-05-${String(1 + (d % 28)).padStart(2, '0')}T10:00:00.000Z`,
        }),
      );
    }
    await addDocument(indexed, 'other');
    for (const text of ['lantern', 'granite meadow', 'velvet thunder quarry', 'LANTERNS, harbours!']) {
      expect((await expectSame('ws', text)).length).toBeGreaterThan(0);
      await expectSame('ws', text, { filters: { metadata: { team: ['core'] } } });
      await expectSame('ws', text, { filters: { metadata: { tags: ['red'] } } });
      await expectSame('ws', text, { filters: { mimeTypes: ['application/pdf'] } });
      await expectSame('ws', text, { filters: { documentIds: [docs[4]?.id as string, docs[7]?.id as string] } });
      await expectSame('ws', text, {
        filters: { createdAfter: '2024-05-10T00:00:00.000Z', createdBefore: '2024-05-20T00:00:00.000Z' },
      });
      await expectSame('other', text);
    }
    // The first query built the index from the database.
    expect(logged.filter((line) => line.includes('rebuilt from the database (no saved index)'))).toHaveLength(1);
    expect(await indexed.keywordSearch(query('ws', 'submarine'))).toEqual([]);
    expect(await indexed.keywordSearch(query('ws', '"*()" ::'))).toEqual([]);
    // The limit keeps the best: the same top chunks as asking for all of them.
    const all = await indexed.keywordSearch(query('ws', 'falcon orchard'));
    const top = await indexed.keywordSearch(query('ws', 'falcon orchard', { limit: 5 }));
    expect(top.map((h) => h.score)).toEqual(all.slice(0, 5).map((h) => h.score));
  });

  it('keeps a filter that passes few of many matches exact', async () => {
    const needle = await addDocument(indexed, 'ws', { metadata: { rare: true }, chunks: 1 });
    for (let d = 0; d < 150; d += 1) await addDocument(indexed, 'ws', { chunks: 2 });
    for (const text of ['lantern harbour granite meadow', 'saddle']) {
      const { truth, found } = await compare('ws', text, { limit: 3, filters: { metadata: { rare: [true] } } });
      expect(found).toEqual(truth);
      expect(found.every((id) => id.startsWith(needle.id))).toBe(true);
      await expectSame('ws', text, { limit: 2000 });
    }
  });

  it('fills a page after most matching documents stop being served, though earlier queries all passed', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 300; d += 1) docs.push(await addDocument(indexed, 'ws', { chunks: 2 }));
    const text = 'lantern harbour granite meadow saddle';
    /** A page of 150 is the best 150 of every match (the same scores as asking for all of them). */
    const page = async () => {
      const all = await indexed.keywordSearch(query('ws', text, { limit: 2000 }));
      const top = await indexed.keywordSearch(query('ws', text, { limit: 150 }));
      expect(all.length).toBeGreaterThan(150);
      // (Scores agree to float32 precision: the index computes them in single precision.)
      const rounded = (hits: typeof all) => hits.map((h) => h.score.toFixed(4));
      expect(rounded(top)).toEqual(rounded(all.slice(0, 150)));
      return top;
    };
    // Every candidate passes: the store learns to ask the index for few more than the page.
    for (let i = 0; i < 3; i += 1) await page();
    // Then two documents in three are deleted: most candidates no longer pass.
    const deleted = new Set(docs.filter((_, i) => i % 3 !== 0).map((doc) => doc.id));
    for (const id of deleted) await indexed.softDelete('ws', id, new Date().toISOString());
    expect((await page()).some((h) => deleted.has(h.chunk.documentId))).toBe(false);
  });

  it('follows rewrites, deletes, purges, new versions, rollbacks and writes of another connection', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 12; d += 1) docs.push(await addDocument(indexed, 'ws'));
    const [first, second, third, fourth] = docs as [DocumentRecord, DocumentRecord, DocumentRecord, DocumentRecord];
    await expectSame('ws', 'lantern');

    // A chunk rewritten in place: found by its new words only.
    await indexed.putChunks([plainChunk(first, 1, 0, 'zeppelin over the meadow')]);
    expect((await indexed.keywordSearch(query('ws', 'zeppelin'))).map((h) => h.chunk.id)).toEqual([`${first.id}:1:0`]);
    await expectSame('ws', 'meadow');

    // Version 2 (new text) served later; as of before it, version 1 again.
    await indexed.appendVersion('ws', second.id, () => plainVersion());
    await putChunksAndComplete(indexed, [plainChunk(second, 2, 0, 'walrus colony')], {
      at: '2024-06-01T10:00:00.000Z',
      embeddingModel: null,
    });
    expect((await indexed.keywordSearch(query('ws', 'walrus'))).map((h) => h.chunk.id)).toEqual([`${second.id}:2:0`]);
    expect(await indexed.keywordSearch(query('ws', 'walrus', { asOf: '2024-05-15T00:00:00.000Z' }))).toEqual([]);
    await expectSame('ws', 'lantern granite', { asOf: '2024-05-15T00:00:00.000Z' });

    // A rollback: version 3 is a copy of version 1's chunks.
    await indexed.appendVersion('ws', second.id, () => plainVersion());
    await indexed.copyChunks(second.id, 1, 3);
    await indexed.completeVersion(second.id, 3, {
      at: '2024-06-02T10:00:00.000Z',
      chunkCount: 3,
      tokens: 6,
      embeddingModel: null,
    });
    expect(await indexed.keywordSearch(query('ws', 'walrus'))).toEqual([]);
    await expectSame('ws', 'lantern granite');
    expect((await expectSame('ws', 'walrus', { asOf: '2024-06-01T12:00:00.000Z' })).length).toBe(1);

    // Deleted chunks, a deleted document, a purged one.
    await indexed.deleteChunks(third.id, 1);
    await indexed.softDelete('ws', fourth.id, '2024-06-03T10:00:00.000Z');
    await indexed.purge('ws', first.id);
    const now = await expectSame('ws', 'lantern harbour granite meadow compass orchard');
    expect(now.some((id) => id.startsWith(third.id) || id.startsWith(fourth.id) || id.startsWith(first.id))).toBe(
      false,
    );
    await expectSame('ws', 'lantern harbour granite', { asOf: '2024-06-02T12:00:00.000Z' });

    // Written through another connection to the same file.
    const elsewhere = await createPlainDocument(exact, 'ws');
    await putChunksAndComplete(exact, [plainChunk(elsewhere, 1, 0, 'written elsewhere about a zeppelin')], {
      embeddingModel: null,
    });
    expect((await indexed.keywordSearch(query('ws', 'zeppelin'))).map((h) => h.chunk.id)).toEqual([
      `${elsewhere.id}:1:0`,
    ]);
  });

  it('is saved at close, caught up at open, and rebuilt when its state is stale, missing or damaged', async () => {
    for (let d = 0; d < 20; d += 1) await addDocument(indexed, 'ws');
    await expectSame('ws', 'lantern');
    await indexed.close();
    const stateFile = path.join(`${file}.keywords`, 'state.json');
    const older = await readFile(stateFile, 'utf8');
    await cp(`${file}.keywords`, path.join(dir, 'older.keywords'), { recursive: true });

    // Reopened after writes made while it was closed: caught up, not rebuilt.
    const late = await addDocument(exact, 'ws');
    await exact.purge('ws', late.id);
    const later = await addDocument(exact, 'ws');
    logged = [];
    indexed = openIndexed();
    const found = await expectSame('ws', 'lantern harbour');
    expect(found.some((id) => id.startsWith(later.id))).toBe(true);
    expect(logged.filter((line) => line.includes('rebuilt'))).toEqual([]);
    await indexed.close();

    // The state of an earlier save (a crash before the last one): the log is replayed or, where
    // pruned, the index is rebuilt; either way nothing is lost or left over.
    await writeFile(stateFile, older);
    await addDocument(exact, 'ws');
    indexed = openIndexed();
    await expectSame('ws', 'lantern harbour');
    await indexed.close();

    // An older copy of the whole index directory.
    await rm(`${file}.keywords`, { recursive: true });
    await cp(path.join(dir, 'older.keywords'), `${file}.keywords`, { recursive: true });
    indexed = openIndexed();
    await expectSame('ws', 'granite meadow');
    await indexed.close();

    // Damaged state: rebuilt.
    logged = [];
    await writeFile(stateFile, '{"format": 1, "table": 7');
    indexed = openIndexed();
    await expectSame('ws', 'lantern harbour');
    expect(logged.some((line) => line.includes('rebuilt from the database (no saved index)'))).toBe(true);
    await indexed.close();

    // Lost altogether: rebuilt.
    logged = [];
    await rm(`${file}.keywords`, { recursive: true });
    indexed = openIndexed();
    await expectSame('ws', 'compass orchard');
    expect(logged.some((line) => line.includes('rebuilt from the database'))).toBe(true);
  });

  it('answers exactly while a large backlog is applied in the background, and through the index after', async () => {
    await indexed.close();
    indexed = openIndexed(10);
    for (let d = 0; d < 20; d += 1) await addDocument(exact, 'ws');
    // More chunks than `syncBelow`: built in the background; meanwhile the exact path answers.
    await expectSame('ws', 'lantern velvet');
    expect(await logs('rebuilt from the database')).toBe(true);
    await expectSame('ws', 'lantern velvet');
    // A backlog above the bound again, then one below it.
    for (let d = 0; d < 5; d += 1) await addDocument(exact, 'ws');
    await expectSame('ws', 'thunder');
    await addDocument(exact, 'ws', { chunks: 1 });
    await expectSame('ws', 'thunder saddle');
  });

  it('when following, is built at start-up before any query and keeps answering exactly as writes come', async () => {
    for (let d = 0; d < 10; d += 1) await addDocument(exact, 'ws');
    await indexed.close();
    logged = [];
    indexed = openIndexed(100_000, true);
    expect(await logs('rebuilt from the database (no saved index): 30 chunks')).toBe(true);
    for (let d = 0; d < 5; d += 1) {
      await addDocument(exact, 'ws');
      await expectSame('ws', 'lantern meadow');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await expectSame('ws', 'granite');
  });

  it('stays exact while many small writes are merged into the index', async () => {
    const docs: DocumentRecord[] = [];
    for (let d = 0; d < 10; d += 1) docs.push(await addDocument(indexed, 'ws'));
    await expectSame('ws', 'lantern');
    // Each query after a write applies it as one small write to the index; 200 of them are merged.
    for (let i = 0; i < 210; i += 1) {
      const doc = docs[i % docs.length] as DocumentRecord;
      await indexed.putChunks([plainChunk(doc, 1, i % 3, `${sentence()} marker${i}`)]);
      if (i % 3 === 2) await indexed.deleteChunks((docs[(i + 5) % docs.length] as DocumentRecord).id, 1);
      expect((await indexed.keywordSearch(query('ws', `marker${i}`))).map((h) => h.chunk.id)).toEqual([
        `${doc.id}:1:${i % 3}`,
      ]);
      if (i % 30 === 0) await expectSame('ws', 'granite compass');
    }
    expect(await logs('new rows merged into the index')).toBe(true);
    await expectSame('ws', 'lantern harbour granite');
    expect(await indexed.keywordSearch(query('ws', 'marker0'))).toEqual([]);
  });

  it('below its size threshold answers exactly as FTS5 does, and through the index, kept up, once past it', async () => {
    await indexed.close();
    indexed = openIndexed(100_000, false, 40);
    for (let d = 0; d < 10; d += 1) await addDocument(exact, 'ws');
    await addDocument(exact, 'other', { chunks: 2 });
    const texts = ['lantern velvet', 'granite', 'thunder saddle compass'];
    // 32 chunks: the same hits as the exact store, scores and order included, now and as of a past instant.
    for (const text of texts) {
      expect(await indexed.keywordSearch(query('ws', text))).toEqual(await exact.keywordSearch(query('ws', text)));
      const past = { asOf: new Date().toISOString(), filters: { mimeTypes: ['text/plain'] } };
      expect(await indexed.keywordSearch(query('ws', text, past))).toEqual(
        await exact.keywordSearch(query('ws', text, past)),
      );
    }
    expect(await indexed.keywordSearch(query('other', 'lantern'))).toEqual(
      await exact.keywordSearch(query('other', 'lantern')),
    );
    // Meanwhile the index is built and follows the writes, so crossing the threshold rebuilds nothing.
    expect(await logs('rebuilt from the database (no saved index): 32 chunks')).toBe(true);
    for (let d = 0; d < 3; d += 1) await addDocument(exact, 'ws');
    const before = logged.length;
    for (const text of texts) {
      const truth = await expectSame('ws', text);
      const hits = await indexed.keywordSearch(query('ws', text));
      const exactHits = await exact.keywordSearch(query('ws', text));
      expect(truth.length).toBeGreaterThan(0);
      // The index's BM25, not FTS5's: the index answered.
      expect(hits.map((h) => h.score)).not.toEqual(exactHits.map((h) => h.score));
    }
    expect(logged.slice(before).filter((line) => line.includes('rebuilt'))).toEqual([]);
    // The few new rows are merged into the index once it is caught up (unmerged rows are searched slowly).
    expect(await logs('new rows merged into the index')).toBe(true);
    // Back below it (documents purged), FTS5 answers again.
    for (const doc of await exact.listDocuments({ workspaceId: 'ws', limit: 10 }).then((page) => page.documents)) {
      await exact.deleteChunks(doc.id, 1);
    }
    for (const text of texts) {
      expect(await indexed.keywordSearch(query('ws', text))).toEqual(await exact.keywordSearch(query('ws', text)));
    }
  });

  it('leaves the directory to the instance that owns it; another answers exactly', async () => {
    for (let d = 0; d < 5; d += 1) await addDocument(indexed, 'ws');
    await expectSame('ws', 'lantern');
    const another = openIndexed();
    try {
      const doc = await addDocument(another, 'ws', { chunks: 1 });
      await another.putChunks([plainChunk(doc, 1, 0, 'zeppelin')]);
      expect((await another.keywordSearch(query('ws', 'zeppelin'))).map((h) => h.chunk.id)).toEqual([`${doc.id}:1:0`]);
      await expectSame('ws', 'zeppelin lantern');
    } finally {
      await another.close();
    }
  });

  it('lets another instance read the index its owner saved, only while the save holds every change', async () => {
    await indexed.close();
    for (let d = 0; d < 6; d += 1) await addDocument(exact, 'ws');
    indexed = openIndexed(100_000, true);
    await expectSame('ws', 'lantern compass');
    const reader = openIndexed();
    const pairs = (hits: { chunk: { id: string }; score: number }[]) => hits.map((h) => [h.chunk.id, h.score]);
    try {
      // The following owner saves when idle; until then the reader says it scans exactly.
      expect(await until(async () => (await reader.ping()) === undefined)).toBe(true);
      const owners = await indexed.keywordSearch(query('ws', 'lantern compass'));
      const fts5 = await exact.keywordSearch(query('ws', 'lantern compass'));
      expect(pairs(owners)).not.toEqual(pairs(fts5));
      // Read through the index: the owner's BM25 scores, not FTS5's.
      expect(pairs(await reader.keywordSearch(query('ws', 'lantern compass')))).toEqual(pairs(owners));
      // A write the saved index does not hold yet: the reader never answers from the stale save.
      const doc = await addDocument(exact, 'ws', { chunks: 1 });
      await exact.putChunks([plainChunk(doc, 1, 0, 'zeppelin lantern')]);
      expect((await reader.keywordSearch(query('ws', 'zeppelin'))).map((h) => h.chunk.id)).toEqual([`${doc.id}:1:0`]);
      expect(await until(async () => (await reader.ping()) === undefined)).toBe(true);
      const after = await indexed.keywordSearch(query('ws', 'zeppelin lantern'));
      expect(after.map((h) => h.chunk.id)).toContain(`${doc.id}:1:0`);
      expect(pairs(await reader.keywordSearch(query('ws', 'zeppelin lantern')))).toEqual(pairs(after));
    } finally {
      await reader.close();
    }
  });

  it('reports itself degraded in readiness while it is built, and ready once it answers', async () => {
    await indexed.close();
    for (let d = 0; d < 20; d += 1) await addDocument(exact, 'ws');
    indexed = openIndexed(10, true);
    // Asked at once, before the build could finish: degraded, saying why.
    expect(((await indexed.ping()) as { degraded?: string } | undefined)?.degraded).toContain('being built');
    expect(await logs('rebuilt from the database')).toBe(true);
    expect(await until(async () => (await indexed.ping()) === undefined)).toBe(true);
    await expectSame('ws', 'velvet');
  });
});
