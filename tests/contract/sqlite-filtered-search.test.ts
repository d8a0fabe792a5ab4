import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchFilters } from '../../core/model/search-filters.model.ts';
import type { DocumentStore, StoreSearchQuery } from '../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { createPlainDocument, plainChunk, plainVersion, putChunksAndComplete } from '../support/document-fixtures.ts';
import { seededRandom } from '../support/seeded-prose.ts';

/**
 * Filtered search on the SQLite store with its vector and keyword indexes: a metadata filter that
 * passes 1 %, 10 % or 50 % of the chunks answers exactly what the exact filtered answer is — for
 * vectors the brute-force nearest chunks among those the filter passes, for keywords the unfiltered
 * ranking restricted to them — now and as of a past instant, and combined with other filters.
 */

const DIMS = 16;
const MODEL = { model: 'filter-test/random-16d', dimensions: DIMS };
const DOCUMENTS = 100;
const PER_DOCUMENT = 4;
const WORDS = ['lantern', 'harbour', 'granite', 'meadow', 'compass', 'orchard', 'falcon', 'glacier', 'velvet'];
const PAST = '2024-05-01T12:00:00.000Z';

interface Written {
  readonly id: string;
  readonly vector: Float32Array;
  /** The tenant of the chunk's version, and whether that version is served now and at {@link PAST}. */
  readonly tenant: string;
  readonly now: boolean;
  readonly past: boolean;
  readonly pdf: boolean;
}

let dir: string;
let store: DocumentStore;
let written: Written[];
const next = seededRandom(11);

function unitVector(): Float32Array {
  const v = Float32Array.from({ length: DIMS }, () => next() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function sentence(): string {
  return Array.from({ length: 5 + Math.floor(next() * 6) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

/** Document `d`'s tenant: 1 of 100 documents `p1`, 10 `p10`, 50 `p50`, the rest `rest`. */
const tenantOf = (d: number) => (d < 1 ? 'p1' : d < 11 ? 'p10' : d < 61 ? 'p50' : 'rest');

async function writeCorpus(): Promise<void> {
  written = [];
  await store.setIndexModel(MODEL);
  for (let d = 0; d < DOCUMENTS; d += 1) {
    const tenant = tenantOf(d);
    const pdf = d % 3 === 0;
    const doc = await createPlainDocument(store, 'ws', {
      metadata: { tenant: tenant === 'rest' && d % 5 === 0 ? 'p1' : tenant },
      mimeType: pdf ? 'application/pdf' : 'text/plain',
    });
    const chunks = Array.from({ length: PER_DOCUMENT }, (_, i) => plainChunk(doc, 1, i, sentence(), unitVector()));
    await putChunksAndComplete(store, chunks, { embeddingModel: MODEL.model });
    // Every fifth `rest` document was `p1` until a second version (served from the next day) changed it.
    const moved = tenant === 'rest' && d % 5 === 0;
    for (const chunk of chunks) {
      const vector = chunk.vector as Float32Array;
      written.push({ id: chunk.id, vector, tenant: moved ? 'p1' : tenant, now: !moved, past: true, pdf });
    }
    if (!moved) continue;
    await store.appendVersion('ws', doc.id, () => plainVersion({ metadata: { tenant: 'rest' } }));
    const second = Array.from({ length: PER_DOCUMENT }, (_, i) => plainChunk(doc, 2, i, sentence(), unitVector()));
    await putChunksAndComplete(store, second, { at: '2024-05-02T10:00:00.000Z', embeddingModel: MODEL.model });
    // Version 2's chunks: served now only, tenant `rest`.
    for (const chunk of second)
      written.push({ id: chunk.id, vector: chunk.vector as Float32Array, tenant: 'rest', now: true, past: false, pdf });
  }
  // Another workspace's `p1` chunks never answer for `ws`.
  const other = await createPlainDocument(store, 'other', { metadata: { tenant: 'p1' } });
  await putChunksAndComplete(
    store,
    Array.from({ length: PER_DOCUMENT }, (_, i) => plainChunk(other, 1, i, sentence(), unitVector())),
    { embeddingModel: MODEL.model },
  );
}

const query = <T extends Partial<StoreSearchQuery>>(extra: T): StoreSearchQuery & T => ({
  workspaceId: 'ws',
  text: '',
  limit: 10,
  asOf: null,
  filters: {},
  ...extra,
});

/** The brute-force nearest chunks that `pass`, best first. */
function exactNearest(vector: Float32Array, pass: (chunk: Written) => boolean, limit = 10): string[] {
  const dot = (a: Float32Array) => a.reduce((sum, x, i) => sum + x * (vector[i] as number), 0);
  return written
    .filter(pass)
    .map((chunk) => ({ id: chunk.id, score: dot(chunk.vector) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((hit) => hit.id);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-filtered-'));
  store = createSqliteDocumentStore({
    file: path.join(dir, 'documents.db'),
    vectorIndex: { exactBelow: 0, expansionSearch: 64 },
    keywordIndex: { syncBelow: 100_000, follow: false, exactBelow: 0 },
  });
  await writeCorpus();
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('filtered search on the SQLite store with its indexes', () => {
  const cases = [
    { tenant: 'p1', chunks: PER_DOCUMENT },
    { tenant: 'p10', chunks: 10 * PER_DOCUMENT },
    { tenant: 'p50', chunks: 50 * PER_DOCUMENT },
  ];

  it('serves the exact nearest chunks among those a 1 %, 10 % or 50 % filter passes, now and as of the past', async () => {
    for (const { tenant, chunks } of cases) {
      expect(written.filter((c) => c.now && c.tenant === tenant)).toHaveLength(chunks);
      const filters: SearchFilters = { metadata: { tenant: [tenant] } };
      for (let q = 0; q < 5; q += 1) {
        const vector = unitVector();
        const now = await store.vectorSearch(query({ vector, filters }));
        expect(now.map((h) => h.chunk.id)).toEqual(exactNearest(vector, (c) => c.now && c.tenant === tenant));
        const past = await store.vectorSearch(query({ vector, filters, asOf: PAST }));
        expect(past.map((h) => h.chunk.id)).toEqual(exactNearest(vector, (c) => c.past && c.tenant === tenant));
      }
    }
    // As of the past, `p1` also holds the documents that left it later: more chunks pass.
    const all = await store.vectorSearch(
      query({ vector: unitVector(), filters: { metadata: { tenant: ['p1'] } }, asOf: PAST, limit: 1000 }),
    );
    expect(all).toHaveLength(written.filter((c) => c.past && c.tenant === 'p1').length);
    expect(all.length).toBeGreaterThan(PER_DOCUMENT);
  });

  it('serves the unfiltered keyword ranking restricted to what a 1 %, 10 % or 50 % filter passes', async () => {
    for (const { tenant } of cases) {
      for (const text of ['lantern', 'granite falcon', 'velvet meadow orchard']) {
        for (const asOf of [null, PAST]) {
          const passes = new Set(
            written.filter((c) => (asOf === null ? c.now : c.past) && c.tenant === tenant).map((c) => c.id),
          );
          const unfiltered = await store.keywordSearch(query({ text, asOf, limit: 1000 }));
          const restricted = unfiltered.filter((h) => passes.has(h.chunk.id)).slice(0, 10);
          const filtered = await store.keywordSearch(
            query({ text, asOf, filters: { metadata: { tenant: [tenant] } } }),
          );
          expect(filtered.map((h) => h.chunk.id)).toEqual(restricted.map((h) => h.chunk.id));
          expect(filtered.map((h) => h.score)).toEqual(restricted.map((h) => h.score));
        }
      }
    }
  });

  it('narrows a tenant filter further by the other filters of the request, and by workspace', async () => {
    const vector = unitVector();
    const filters: SearchFilters = { metadata: { tenant: ['p50'] }, mimeTypes: ['application/pdf'] };
    const hits = await store.vectorSearch(query({ vector, filters, limit: 1000 }));
    expect(hits.map((h) => h.chunk.id)).toEqual(
      exactNearest(vector, (c) => c.now && c.tenant === 'p50' && c.pdf, 1000),
    );
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThan(50 * PER_DOCUMENT);
    const keyword = await store.keywordSearch(query({ text: 'lantern harbour granite', filters, limit: 1000 }));
    expect(keyword.length).toBeGreaterThan(0);
    for (const hit of keyword) expect(hit.documentMetadata.tenant).toBe('p50');
    const pdfIds = new Set(written.filter((c) => c.pdf).map((c) => c.id));
    for (const hit of keyword) expect(pdfIds.has(hit.chunk.id)).toBe(true);
    // One of the tenant's documents named: only its chunks.
    const one = written.find((c) => c.tenant === 'p10')?.id.split(':')[0] as string;
    const narrowed = await store.vectorSearch(
      query({ vector, filters: { metadata: { tenant: ['p10'] }, documentIds: [one] }, limit: 1000 }),
    );
    expect(narrowed.map((h) => h.chunk.documentId)).toEqual(Array(PER_DOCUMENT).fill(one));
    // A tenant and a document of another tenant: nothing passes.
    const none = await store.keywordSearch(
      query({ text: 'lantern harbour granite meadow', filters: { metadata: { tenant: ['p1'] }, documentIds: [one] } }),
    );
    expect(none).toEqual([]);
    // `p1` of the other workspace never answers for this one.
    const p1 = await store.vectorSearch(query({ vector, filters: { metadata: { tenant: ['p1'] } }, limit: 1000 }));
    expect(p1).toHaveLength(PER_DOCUMENT);
    for (const hit of p1) expect(hit.chunk.workspaceId).toBe('ws');
  });

  it('sees a version that joins the filter after the last query of its kind, and one that leaves it', async () => {
    const filters: SearchFilters = { metadata: { tenant: ['p1'] } };
    const vector = unitVector();
    const before = await store.vectorSearch(query({ vector, filters, limit: 1000 }));
    expect(before).toHaveLength(PER_DOCUMENT);
    const moving = written.find((c) => c.now && c.tenant === 'p50')?.id.split(':')[0] as string;
    await store.appendVersion('ws', moving, () => plainVersion({ metadata: { tenant: 'p1' } }));
    const doc = { id: moving, workspaceId: 'ws' };
    await putChunksAndComplete(store, [plainChunk(doc, 2, 0, 'lantern lantern lantern', vector)], {
      at: '2024-05-03T10:00:00.000Z',
      embeddingModel: MODEL.model,
    });
    const after = await store.vectorSearch(query({ vector, filters, limit: 1000 }));
    expect(after).toHaveLength(PER_DOCUMENT + 1);
    expect(after[0]?.chunk.id).toBe(`${moving}:2:0`);
    const keyword = await store.keywordSearch(query({ text: 'lantern', filters }));
    expect(keyword.map((h) => h.chunk.id)).toContain(`${moving}:2:0`);
    await store.softDelete('ws', moving, '2024-05-04T10:00:00.000Z');
    expect(await store.vectorSearch(query({ vector, filters, limit: 1000 }))).toHaveLength(PER_DOCUMENT);
    const gone = await store.keywordSearch(query({ text: 'lantern', filters }));
    expect(gone.map((h) => h.chunk.documentId)).not.toContain(moving);
  });

  it('breaks ties in distance by chunk id, on the first scan of a filter and on the next ones', async () => {
    const vector = unitVector();
    const doc = await createPlainDocument(store, 'ws', { metadata: { tenant: 'tie' } });
    const chunks = Array.from({ length: 12 }, (_, i) => plainChunk(doc, 1, i, sentence(), vector));
    await putChunksAndComplete(store, chunks, { embeddingModel: MODEL.model });
    // By id, `…:1:10` and `…:1:11` come before `…:1:2`.
    const byId = chunks.map((c) => c.id).sort();
    for (let round = 0; round < 2; round += 1) {
      const hits = await store.vectorSearch(query({ vector, filters: { metadata: { tenant: ['tie'] } }, limit: 5 }));
      expect(hits.map((h) => h.chunk.id)).toEqual(byId.slice(0, 5));
    }
  });
});
