import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunksView, ContextView, DocumentView, SearchResultView } from '../../core/model/response-views.model.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Every accepted format, end to end through the embedded runtime and real HTTP: upload, the
 * whole pipeline (OCR included), then keyword and hybrid search on words that only one file holds.
 */

interface FormatCase {
  readonly file: string;
  readonly declared: string;
  readonly mime: string;
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const CASES: readonly FormatCase[] = [
  { file: 'plain.txt', declared: 'text/plain', mime: 'text/plain' },
  { file: 'sample.md', declared: 'text/markdown', mime: 'text/markdown' },
  { file: 'quoted.csv', declared: 'text/csv', mime: 'text/csv' },
  { file: 'large.csv', declared: 'application/octet-stream', mime: 'text/csv' },
  { file: 'nested.json', declared: 'application/json', mime: 'application/json' },
  { file: 'multipage.pdf', declared: 'application/pdf', mime: 'application/pdf' },
  { file: 'scanned.pdf', declared: 'application/pdf', mime: 'application/pdf' },
  { file: 'mixed.pdf', declared: 'application/octet-stream', mime: 'application/pdf' },
  { file: 'report.docx', declared: DOCX, mime: DOCX },
  { file: 'workbook.xlsx', declared: 'application/octet-stream', mime: XLSX },
];

type Mode = 'keyword' | 'hybrid';

let svc: TestService;
const ids = new Map<string, string>();
const docs = new Map<string, DocumentView>();

const idOf = (file: string): string => {
  const id = ids.get(file);
  if (!id) throw new Error(`${file} was not uploaded`);
  return id;
};

async function chunksOf(file: string): Promise<ChunksView['chunks']> {
  const res = await svc.request<ChunksView>('GET', `/api/v1/chunks/${idOf(file)}`);
  expect(res.status).toBe(200);
  expect(res.body.pagination.has_more).toBe(false);
  return res.body.chunks;
}

async function contextOf(file: string): Promise<string> {
  const res = await svc.request<ContextView>('GET', `/api/v1/chunks/${idOf(file)}/context`);
  expect(res.status).toBe(200);
  return res.body.content;
}

async function search(query: string, mode: Mode, limit = 20): Promise<SearchResultView[]> {
  const res = await svc.request<{ results: SearchResultView[]; mode: string }>('POST', '/api/v1/search', {
    json: { query, mode, limit },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.mode).toBe(mode);
  return res.body.results;
}

/** The hits of `query` in `file`, asserting that keyword search finds nothing outside `only`. */
async function hitsIn(file: string, query: string, mode: Mode, only: readonly string[] = [file]) {
  const results = await search(query, mode);
  if (mode === 'keyword') {
    const allowed = new Set(only.map(idOf));
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((r) => !allowed.has(r.document_id)).map((r) => r.document_name)).toEqual([]);
  }
  const hits = results.filter((r) => r.document_id === idOf(file));
  expect(hits.length, `${mode} search for "${query}" did not find ${file}`).toBeGreaterThan(0);
  return hits;
}

/** The chunk record behind a search hit, with the chunk's own structure metadata. */
async function chunkOf(hit: SearchResultView | undefined): Promise<ChunksView['chunks'][number]> {
  if (!hit) throw new Error('no hit');
  const res = await svc.request<ChunksView>('GET', `/api/v1/chunks/${hit.document_id}`);
  const chunk = res.body.chunks.find((c) => c.id === hit.chunk_id);
  if (!chunk) throw new Error(`chunk ${hit.chunk_id} is not in the chunk list`);
  expect(chunk.content).toBe(hit.content);
  expect(chunk.page).toBe(hit.page);
  return chunk;
}

/** The first hit whose content holds `text` (hybrid search also ranks other chunks of the file). */
function hitWith(hits: readonly SearchResultView[], text: string): SearchResultView {
  const hit = hits.find((h) => h.content.includes(text));
  if (!hit) throw new Error(`no hit contains ${JSON.stringify(text)}: ${JSON.stringify(hits.map((h) => h.content))}`);
  return hit;
}

beforeAll(async () => {
  svc = await startTestService({
    env: { KB_OCR: 'true', KB_PARSE_THREADS: '2' },
  });
  for (const c of CASES) {
    const res = await svc.upload(c.file, fixture(c.file), { type: c.declared });
    expect(res.status, res.text).toBe(201);
    expect(res.body.mime_type).toBe(c.mime);
    ids.set(c.file, res.body.document_id);
  }
  for (const c of CASES) docs.set(c.file, await svc.waitForStatus(idOf(c.file), 'completed', { timeoutMs: 240_000 }));
}, 300_000);

afterAll(async () => {
  await svc?.close();
});

describe('every format is ingested', () => {
  it.each(CASES.map((c) => [c.file, c]))('%s completes with its detected type and no error', (file, c) => {
    const doc = docs.get(file) as DocumentView;
    expect(doc.status).toBe('completed');
    expect(doc.mime_type).toBe(c.mime);
    expect(doc.error).toBeNull();
    expect(doc.stats.chunks).toBeGreaterThan(0);
  });

  it.each(CASES.map((c) => [c.file]))(
    '%s: stats match the chunk list and every chunk points into the extracted text',
    async (file) => {
      const doc = docs.get(file) as DocumentView;
      const chunks = await chunksOf(file);
      const text = await contextOf(file);
      expect(doc.stats.chunks).toBe(chunks.length);
      expect(doc.stats.tokens).toBe(chunks.reduce((sum, c) => sum + c.tokens, 0));
      expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
      let previousEnd = 0;
      for (const chunk of chunks) {
        expect(chunk.start_offset).toBeGreaterThanOrEqual(previousEnd);
        expect(chunk.end_offset).toBeGreaterThan(chunk.start_offset);
        expect(chunk.end_offset).toBeLessThanOrEqual(text.length);
        expect(chunk.tokens).toBeGreaterThan(0);
        // A chunk's content ends with its own text (any overlap or table header comes first).
        expect(chunk.content.endsWith(text.slice(chunk.start_offset, chunk.end_offset))).toBe(true);
        expect(chunk.page === null || doc.mime_type === 'application/pdf').toBe(true);
        previousEnd = chunk.end_offset;
      }
    },
  );
});

describe('PDF pages', () => {
  it('gives every chunk of a multi-page PDF the page its text is on', async () => {
    const chunks = await chunksOf('multipage.pdf');
    const text = await contextOf('multipage.pdf');
    const ownText = (c: (typeof chunks)[number]) => text.slice(c.start_offset, c.end_offset);
    const pageOf = (word: string) => chunks.filter((c) => ownText(c).includes(word)).map((c) => c.page);
    expect(pageOf('Aardvarks')).toEqual([1]);
    expect(pageOf('Bumblebee')).toEqual([2]);
    expect(pageOf('Chrysanthemum')).toEqual([3]);
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search for a word only on page 3 answers page 3', async (mode) => {
    const hits = await hitsIn('multipage.pdf', 'chrysanthemums greenhouse', mode);
    const hit = hitWith(hits, 'Chrysanthemums in the greenhouse bloomed three weeks early');
    expect(hit.page).toBe(3);
    if (mode === 'keyword') expect(hits[0]).toBe(hit);
  });

  it.each<Mode>(['keyword', 'hybrid'])(
    '%s search finds a word that exists only as pixels on a scanned page (OCR)',
    async (mode) => {
      // The scanned page is scanned.pdf's only page and mixed.pdf's third page.
      const only = ['scanned.pdf', 'mixed.pdf'];
      const scanned = hitWith(await hitsIn('scanned.pdf', 'forklift batteries', mode, only), 'orklift');
      expect(scanned.page).toBe(1);
      expect((await chunkOf(scanned)).metadata).toMatchObject({ ocr: true });
      const mixed = hitWith(await hitsIn('mixed.pdf', 'forklift batteries', mode, only), 'orklift');
      expect(mixed.page).toBe(3);
      expect((await chunkOf(mixed)).metadata).toMatchObject({ ocr: true });
    },
  );

  it('keeps the text-layer pages of a mixed PDF apart from its OCR page', async () => {
    const chunks = await chunksOf('mixed.pdf');
    expect([...new Set(chunks.map((c) => c.page))]).toEqual([1, 2, 3]);
    for (const chunk of chunks) expect(chunk.metadata.ocr === true).toBe(chunk.page === 3);
    const bumblebee = await hitsIn('mixed.pdf', 'bumblebee meadow census', 'keyword', ['mixed.pdf', 'multipage.pdf']);
    expect(hitWith(bumblebee, 'Bumblebee Meadow Census').page).toBe(2);
  });
});

describe('structured formats', () => {
  it.each<Mode>(['keyword', 'hybrid'])(
    '%s search finds a value of one spreadsheet cell, with the header row and the sheet',
    async (mode) => {
      const hit = hitWith(await hitsIn('workbook.xlsx', 'projector', mode), 'Projector,3');
      expect(hit.content).toContain('Item,Quantity\n');
      expect((await chunkOf(hit)).metadata).toMatchObject({ sheet: 'Inventory' });
      expect(hit.content).not.toContain('Bruno Silva');
      expect(hit.page).toBeNull();
    },
  );

  it('keeps each sheet in its own chunks, every one starting with its header row', async () => {
    const chunks = await chunksOf('workbook.xlsx');
    expect(chunks.map((c) => c.metadata.sheet)).toEqual(['Employees', 'Inventory']);
    expect(chunks[0]?.content).toContain('Name,Department,Salary\nAlice Moreau,Engineering,98000');
    expect(chunks[1]?.content).toContain('Item,Quantity\nStapler,12');
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search finds a JSON value together with its key path', async (mode) => {
    const hits = await hitsIn('nested.json', '98101', mode);
    hitWith(hits, '$.headquarters.address.zip: 98101');
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search finds a DOCX heading and its section', async (mode) => {
    const hits = await hitsIn('report.docx', 'release checklist', mode);
    const hit = hitWith(hits, 'Release Checklist');
    expect(hit.content).toContain('Tag the release candidate');
    expect((await chunkOf(hit)).metadata.headings).toEqual(['Project Falcon Handbook', 'Release Checklist']);
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search finds one row of a 5,000-row CSV with its header', async (mode) => {
    const hit = hitWith(await hitsIn('large.csv', '04217', mode), '\n4217,Customer 04217,');
    expect(hit.content).toMatch(/^id,customer,city,amount,note\n/);
  });

  it('splits the 5,000-row CSV into many chunks, each starting with the header row', async () => {
    const chunks = await chunksOf('large.csv');
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) expect(chunk.content.startsWith('id,customer,city,amount,note\n')).toBe(true);
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search finds a quoted CSV field with its comma', async (mode) => {
    const hit = hitWith(await hitsIn('quoted.csv', "O'Brien", mode), '"Smith, Jane"');
    expect(hit.content).toMatch(/^name,comment,score\n/);
  });
});

describe('text formats', () => {
  it.each<Mode>(['keyword', 'hybrid'])('%s search finds plain text', async (mode) => {
    hitWith(await hitsIn('plain.txt', 'lighthouse keeper', mode), 'The lighthouse keeper climbed the stairs at dusk.');
  });

  it.each<Mode>(['keyword', 'hybrid'])('%s search finds a markdown section under its heading path', async (mode) => {
    const hit = hitWith(await hitsIn('sample.md', 'blueberry', mode), 'never add lime to blueberry beds');
    expect((await chunkOf(hit)).metadata.headings).toEqual(['Garden Handbook', 'Planting', 'Soil Mix']);
  });
});
