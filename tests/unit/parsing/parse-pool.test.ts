import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { MIME } from '../../../core/parsing/detect-type.ts';
import type { ParsedDocument, TextBlock } from '../../../core/parsing/parsed-document.ts';
import { createParsePool, type ParsePool } from '../../../core/workers/parse-pool.ts';
import {
  deeplyNestedJson,
  FIXTURES_DIR,
  fixture,
  hugeJsonArray,
  longLineCsv,
  manyRowsXlsx,
} from '../../fixtures/hostile-files.ts';

const blockText = (doc: ParsedDocument, block: TextBlock): string => doc.text.slice(block.start, block.end);
const words = (text: string): string[] => text.toLowerCase().match(/[a-z]+/g) ?? [];

async function failure(promise: Promise<unknown>): Promise<KbError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KbError);
  return error as KbError;
}

/** The pool still answers: a normal file parses after whatever came before. */
async function expectHealthy(pool: ParsePool): Promise<void> {
  const doc = await pool.parse({ bytes: fixture('plain.txt'), mimeType: MIME.text });
  expect(doc.text).toContain('lighthouse keeper');
}

describe('parse pool: documents', () => {
  let pool: ParsePool;
  beforeAll(() => {
    pool = createParsePool({ threads: 2, taskTimeoutMs: 90_000, maxHeapMb: 512, ocr: true });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('extracts a multi-page PDF with the page number on every block', async () => {
    const doc = await pool.parse({ bytes: fixture('multipage.pdf'), mimeType: MIME.pdf, filename: 'notes.pdf' });
    expect(doc.pageCount).toBe(3);
    const pageOf = (word: string): number | null | undefined =>
      doc.blocks.find((b) => blockText(doc, b).includes(word))?.page;
    expect(pageOf('Aardvarks')).toBe(1);
    expect(pageOf('Bumblebee')).toBe(2);
    expect(pageOf('Chrysanthemum')).toBe(3);
    expect(doc.blocks.every((b) => b.page !== null && !b.ocr)).toBe(true);
    expect(doc.text).toContain('seventeen burrows along the riverbank');
  });

  it('turns a DOCX into headings with levels, list items and table rows', async () => {
    const doc = await pool.parse({ bytes: fixture('report.docx'), mimeType: MIME.docx });
    const headings = doc.blocks.filter((b) => b.kind === 'heading').map((b) => [blockText(doc, b), b.level]);
    expect(headings).toEqual([
      ['Project Falcon Handbook', 1],
      ['Release Checklist', 2],
      ['On-call Duties', 2],
    ]);
    const items = doc.blocks.filter((b) => b.kind === 'list-item').map((b) => blockText(doc, b));
    expect(items).toEqual([
      '1. Freeze the main branch',
      '2. Run the regression suite',
      '3. Tag the release candidate',
      '- Answer pages within fifteen minutes',
      '- Write an incident summary',
    ]);
    const rows = doc.blocks.filter((b) => b.kind === 'row');
    expect(rows.map((b) => [blockText(doc, b), b.header])).toEqual([
      ['Duty manager,Maria Lopez', 'Role,Contact'],
      ['Release captain,Kenji Sato', 'Role,Contact'],
    ]);
  });

  it('turns an XLSX into one table per sheet, with the sheet name and header on every row', async () => {
    const doc = await pool.parse({ bytes: fixture('workbook.xlsx'), mimeType: MIME.xlsx });
    const sheets = doc.blocks.filter((b) => b.kind === 'heading').map((b) => blockText(doc, b));
    expect(sheets).toEqual(['Employees', 'Inventory']);
    const rows = doc.blocks.filter((b) => b.kind === 'row');
    expect(rows.map((b) => [b.section, b.header, blockText(doc, b)])).toEqual([
      ['Employees', 'Name,Department,Salary', 'Alice Moreau,Engineering,98000'],
      ['Employees', 'Name,Department,Salary', 'Bruno Silva,Finance,87500'],
      ['Employees', 'Name,Department,Salary', 'Chen Wei,Engineering,101000'],
      ['Inventory', 'Item,Quantity', 'Stapler,12'],
      ['Inventory', 'Item,Quantity', 'Projector,3'],
    ]);
  });

  it('OCRs a scanned page that has no text layer', async () => {
    const doc = await pool.parse({ bytes: fixture('scanned.pdf'), mimeType: MIME.pdf });
    expect(doc.pageCount).toBe(1);
    expect(doc.blocks.length).toBeGreaterThan(0);
    expect(doc.blocks.every((b) => b.ocr === true && b.page === 1)).toBe(true);
    const expected = words(readFileSync(path.join(FIXTURES_DIR, '..', 'src', 'scanned-page.txt'), 'utf8'));
    const found = new Set(words(doc.text));
    const recognised = expected.filter((w) => found.has(w));
    expect(recognised.length / expected.length).toBeGreaterThanOrEqual(0.8);
  });

  it('yields text-layer pages and OCR pages from a mixed PDF', async () => {
    const doc = await pool.parse({ bytes: fixture('mixed.pdf'), mimeType: MIME.pdf });
    expect(doc.pageCount).toBe(3);
    const textPages = new Set(doc.blocks.filter((b) => !b.ocr).map((b) => b.page));
    const ocrPages = new Set(doc.blocks.filter((b) => b.ocr).map((b) => b.page));
    expect([...textPages]).toEqual([1, 2]);
    expect([...ocrPages]).toEqual([3]);
    expect(doc.text).toContain('Bumblebee Meadow Census');
    expect(words(doc.text)).toEqual(expect.arrayContaining(['warehouse', 'inspector', 'forklift']));
  });

  it('parses text formats and leaves the caller’s buffer usable', async () => {
    const bytes = fixture('nested.json');
    const doc = await pool.parse({ bytes, mimeType: MIME.json });
    expect(doc.text).toContain('$.users[0].name: Alice');
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.toString('utf8')).toContain('Northwind');
  });

  it('runs parses side by side', async () => {
    const docs = await Promise.all([
      pool.parse({ bytes: fixture('large.csv'), mimeType: MIME.csv }),
      pool.parse({ bytes: fixture('sample.md'), mimeType: MIME.markdown }),
      pool.parse({ bytes: fixture('quoted.csv'), mimeType: MIME.csv }),
      pool.parse({ bytes: fixture('report.docx'), mimeType: MIME.docx }),
    ]);
    expect(docs.map((d) => d.blocks.length)).toEqual([5000, 16, 3, 13]);
  });
});

describe('parse pool: hostile files', () => {
  let pool: ParsePool;
  beforeAll(() => {
    pool = createParsePool({ threads: 2, taskTimeoutMs: 90_000, maxHeapMb: 512, ocr: false });
  });
  afterAll(async () => {
    await pool.close();
  });

  // Each fails with its own code, not parse-timeout (so well within the task timeout), and the
  // pool goes on parsing normal files.
  const cases: [string, () => Buffer, string, string, RegExp][] = [
    ['DOCX zip bomb', () => fixture('docx-bomb.docx'), MIME.docx, 'decompression-bomb', /declares 300 MiB/],
    ['XLSX zip bomb', () => fixture('xlsx-bomb.xlsx'), MIME.xlsx, 'decompression-bomb', /declares 300 MiB/],
    [
      'DOCX bomb lying about its size',
      () => fixture('docx-bomb-lying.docx'),
      MIME.docx,
      'decompression-bomb',
      /beyond its declared size/,
    ],
    ['billion laughs in a DOCX', () => fixture('billion-laughs.docx'), MIME.docx, 'unsupported-content', /DTD/],
    ['encrypted PDF', () => fixture('encrypted.pdf'), MIME.pdf, 'encrypted-file', /password/],
    ['truncated PDF', () => fixture('truncated.pdf'), MIME.pdf, 'corrupt-file', /PDF/],
    ['PDF whose page tree loops', () => fixture('page-loop.pdf'), MIME.pdf, 'corrupt-file', /circular/],
    ['XLSX with a million rows', () => manyRowsXlsx(1_000_000), MIME.xlsx, 'content-too-large', /rows/],
    ['CSV with a 10 MB line', () => longLineCsv(10 * 1024 * 1024), MIME.csv, 'content-too-large', /record/],
    ['JSON nested 100,000 levels', () => deeplyNestedJson(100_000), MIME.json, 'content-too-large', /nested/],
    ['JSON with ten million values', () => hugeJsonArray(10_000_000), MIME.json, 'content-too-large', /values/],
    ['PDF that is not a PDF', () => Buffer.from('%PDF-1.7\nnothing else'), MIME.pdf, 'corrupt-file', /PDF/],
    ['DOCX that is not a zip', () => fixture('plain.txt'), MIME.docx, 'corrupt-file', /zip/],
    ['XLSX that is a DOCX', () => fixture('report.docx'), MIME.xlsx, 'corrupt-file', /xl\/workbook\.xml/],
  ];

  it.each(cases)(
    '%s fails with its error code and the pool keeps serving',
    async (_, make, mimeType, code, message) => {
      const error = await failure(pool.parse({ bytes: make(), mimeType }));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      await expectHealthy(pool);
    },
  );

  it('refuses input over the size limit before it reaches a thread', async () => {
    const error = await failure(pool.parse({ bytes: Buffer.alloc(50 * 1024 * 1024 + 1, 'a'), mimeType: MIME.text }));
    expect(error.code).toBe('content-too-large');
  });

  it('reports a password-protected Office file as encrypted-file', async () => {
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1024)]);
    expect((await failure(pool.parse({ bytes: ole, mimeType: MIME.docx }))).code).toBe('encrypted-file');
  });

  it('also fails a sheet over the row limit whose dimension claims a few rows', async () => {
    const error = await failure(pool.parse({ bytes: manyRowsXlsx(250_000, 10), mimeType: MIME.xlsx }));
    expect(error.code).toBe('content-too-large');
  });
});

describe('parse pool: timeouts and crashes', () => {
  it('stops a parse that outlives the task timeout with parse-timeout, then serves the next file', async () => {
    // OCR of a scanned page takes seconds; the limit here is half a second.
    const pool = createParsePool({ threads: 1, taskTimeoutMs: 500, maxHeapMb: 512, ocr: true });
    try {
      const error = await failure(pool.parse({ bytes: fixture('scanned.pdf'), mimeType: MIME.pdf }));
      expect(error.code).toBe('parse-timeout');
      await expectHealthy(pool);
    } finally {
      await pool.close();
    }
  });

  it('turns a thread that runs out of memory into parser-crashed, then serves the next file', async () => {
    const lines = ['id,name,city'];
    for (let i = 0; i < 500_000; i++) lines.push(`${i},Customer number ${i},City ${i % 100}`);
    const pool = createParsePool({ threads: 1, taskTimeoutMs: 60_000, maxHeapMb: 64, ocr: false });
    try {
      const error = await failure(pool.parse({ bytes: Buffer.from(lines.join('\n')), mimeType: MIME.csv }));
      expect(error.code).toBe('parser-crashed');
      expect(error.message).toMatch(/out of memory/);
      await expectHealthy(pool);
    } finally {
      await pool.close();
    }
  });

  it('keeps callers waiting beyond the free threads, and refuses them once the wait list is full', async () => {
    const pool = createParsePool({ threads: 1, taskTimeoutMs: 60_000, maxHeapMb: 256, ocr: false, maxPending: 1 });
    try {
      const first = pool.parse({ bytes: fixture('large.csv'), mimeType: MIME.csv });
      const second = pool.parse({ bytes: fixture('sample.md'), mimeType: MIME.markdown });
      const third = failure(pool.parse({ bytes: fixture('plain.txt'), mimeType: MIME.text }));
      expect((await third).code).toBe('service-unavailable');
      expect((await first).blocks).toHaveLength(5000);
      expect((await second).blocks).toHaveLength(16);
    } finally {
      await pool.close();
    }
    expect((await failure(pool.parse({ bytes: fixture('plain.txt'), mimeType: MIME.text }))).code).toBe(
      'service-unavailable',
    );
  });

  it('lets waiting callers of a share whose files took little time go before more of a busy share', async () => {
    const pool = createParsePool({ threads: 1, taskTimeoutMs: 60_000, maxHeapMb: 256, ocr: false });
    try {
      const done: string[] = [];
      const parse = (name: string, share: string, file: string, mimeType: string) =>
        pool.parse({ bytes: fixture(file), mimeType, share }).then(() => done.push(name));
      // The busy workspace queues four large files, then a quiet one sends two small ones.
      const all = [
        parse('busy-1', 'busy', 'large.csv', MIME.csv),
        parse('busy-2', 'busy', 'large.csv', MIME.csv),
        parse('busy-3', 'busy', 'large.csv', MIME.csv),
        parse('busy-4', 'busy', 'large.csv', MIME.csv),
        parse('quiet-1', 'quiet', 'plain.txt', MIME.text),
        parse('quiet-2', 'quiet', 'sample.md', MIME.markdown),
      ];
      await Promise.all(all);
      // The thread was busy with the first large file when the others arrived; once it is done the
      // quiet workspace, which has used no thread time, goes first.
      expect(done).toEqual(['busy-1', 'quiet-1', 'quiet-2', 'busy-2', 'busy-3', 'busy-4']);
    } finally {
      await pool.close();
    }
  });
});
