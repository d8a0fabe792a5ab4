import { describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { MIME } from '../../../core/parsing/detect-type.ts';
import { type ParseLimitOverrides, parseDocument } from '../../../core/parsing/parse-document.ts';
import type { ParsedDocument, TextBlock } from '../../../core/parsing/parsed-document.ts';
import { deeplyNestedJson, fixture, hugeJsonArray, longLineCsv } from '../../fixtures/hostile-files.ts';

const blockText = (doc: ParsedDocument, block: TextBlock): string => doc.text.slice(block.start, block.end);
const texts = (doc: ParsedDocument, kind?: TextBlock['kind']): string[] =>
  doc.blocks.filter((b) => kind === undefined || b.kind === kind).map((b) => blockText(doc, b));

/** Every block is a non-empty, ordered, non-overlapping range of the text. */
function expectConsistent(doc: ParsedDocument): void {
  let last = 0;
  for (const block of doc.blocks) {
    expect(block.start).toBeGreaterThanOrEqual(last);
    expect(block.end).toBeGreaterThan(block.start);
    expect(block.end).toBeLessThanOrEqual(doc.text.length);
    last = block.end;
  }
}

async function parseError(bytes: Buffer, mimeType: string, limits?: ParseLimitOverrides): Promise<KbError> {
  const error = await parseDocument(bytes, mimeType, limits ? { limits } : {}).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KbError);
  return error as KbError;
}

describe('plain text', () => {
  it('splits paragraphs on blank lines (whitespace-only lines included) and keeps line breaks inside', async () => {
    const doc = await parseDocument(fixture('plain.txt'), MIME.text);
    expectConsistent(doc);
    expect(texts(doc, 'paragraph')).toEqual([
      'The lighthouse keeper climbed the stairs at dusk.\nHe lit the lamp and wrote in the logbook.',
      'Ships passed the rocks safely that night.',
      'In the morning the fog lifted over the harbour.',
    ]);
    expect(doc.pageCount).toBeNull();
    expect(doc.blocks.every((b) => b.page === null)).toBe(true);
  });

  it('normalises CRLF and drops a BOM', async () => {
    const doc = await parseDocument(Buffer.from('\ufeffone\r\n\r\ntwo\r\n'), MIME.text);
    expect(doc.text).toBe('one\n\ntwo');
  });

  it('decodes UTF-16 (little or big endian) after its byte order mark', async () => {
    const le = Buffer.from('\ufeffGrüße aus Köln\r\n\r\nzweiter Absatz 😀\r\n', 'utf16le');
    for (const bytes of [le, Buffer.from(le).swap16()]) {
      expect((await parseDocument(bytes, MIME.text)).text).toBe('Grüße aus Köln\n\nzweiter Absatz 😀');
    }
    const md = await parseDocument(Buffer.from('\ufeff# Title\n\nBody text.\n', 'utf16le'), MIME.markdown);
    expect(md.text).toContain('Body text.');
  });

  it('calls UTF-16 with an odd byte, an unpaired surrogate or a NUL character corrupt', async () => {
    const odd = Buffer.concat([Buffer.from('\ufeffabc', 'utf16le'), Buffer.from([0x41])]);
    const lone = Buffer.concat([
      Buffer.from('\ufeffab', 'utf16le'),
      Buffer.from([0x00, 0xd8]),
      Buffer.from('c', 'utf16le'),
    ]);
    const nul = Buffer.from('\ufeffa\0b', 'utf16le');
    for (const bytes of [odd, lone, nul]) expect((await parseError(bytes, MIME.text)).code).toBe('corrupt-file');
  });

  it('fails with no-text for whitespace only and corrupt-file for invalid UTF-8', async () => {
    expect((await parseError(Buffer.from(' \n\n\t\n'), MIME.text)).code).toBe('no-text');
    expect((await parseError(Buffer.from([0x66, 0xff, 0x66]), MIME.text)).code).toBe('corrupt-file');
  });

  it('fails with content-too-large past the text limit', async () => {
    const error = await parseError(Buffer.from('word '.repeat(1000)), MIME.text, { maxTextChars: 100 });
    expect(error.code).toBe('content-too-large');
  });
});

describe('markdown', () => {
  it('turns headings into heading blocks with levels, and keeps lists and fenced code', async () => {
    const doc = await parseDocument(fixture('sample.md'), MIME.markdown);
    expectConsistent(doc);
    const headings = doc.blocks.filter((b) => b.kind === 'heading').map((b) => [blockText(doc, b), b.level]);
    expect(headings).toEqual([
      ['Garden Handbook', 1],
      ['Planting', 2],
      ['Soil Mix', 3],
      ['Watering', 2],
      ['Tools', 2],
    ]);
    expect(texts(doc, 'list-item')).toEqual([
      '- Dig a hole twice the size of the root ball',
      '- Water the seedling before planting\nand again right after',
      '- Mulch around the stem',
      '1. Label every bed',
      '2. Record the planting date',
    ]);
    expect(texts(doc, 'code')).toEqual(['mix --compost 1 --topsoil 1\n# never add lime to blueberry beds']);
    expect(texts(doc, 'paragraph')).toContain(
      'Seeds go into the raised beds in early spring.\nTomatoes need full sun.',
    );
    expect(doc.text).not.toContain('```');
    expect(doc.text).not.toContain('# Garden Handbook');
    expect(doc.text).not.toContain('## Planting');
    expect(doc.text).not.toContain('--------');
  });

  it('does not end a fence at a line of the other fence character', async () => {
    const doc = await parseDocument(Buffer.from('~~~\nline one\n```\nline two\n~~~\nafter'), MIME.markdown);
    expect(texts(doc, 'code')).toEqual(['line one\n```\nline two']);
    expect(texts(doc, 'paragraph')).toEqual(['after']);
  });
});

describe('CSV', () => {
  it('repeats the header into every row and keeps quoted commas, quotes and newlines in a field', async () => {
    const doc = await parseDocument(fixture('quoted.csv'), MIME.csv);
    expectConsistent(doc);
    const rows = doc.blocks.filter((b) => b.kind === 'row');
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.header === 'name,comment,score')).toBe(true);
    expect(texts(doc, 'row')).toEqual([
      '"Smith, Jane","Said ""hello""\nthen left",42',
      'Lee,plain comment,7',
      `O'Brien,"multi\nline\nfield",13`,
    ]);
    expect(doc.text.startsWith('name,comment,score\n')).toBe(true);
  });

  it('reads a 5,000-row file into 5,000 row blocks', async () => {
    const doc = await parseDocument(fixture('large.csv'), MIME.csv);
    const rows = doc.blocks.filter((b) => b.kind === 'row');
    expect(rows).toHaveLength(5000);
    expect(rows[4999]?.header).toBe('id,customer,city,amount,note');
    expect(blockText(doc, rows[6] as TextBlock)).toMatch(/^7,Customer 00007,[A-Za-z]+,[\d.]+,"order 7, priority \d"$/);
  });

  it('detects semicolon and tab delimiters', async () => {
    const semi = await parseDocument(Buffer.from('a;b\n1;"x;y"\n'), MIME.csv);
    expect(texts(semi, 'row')).toEqual(['1,x;y']);
    expect(semi.blocks[0]?.header).toBe('a,b');
    const tabs = await parseDocument(Buffer.from('a\tb\n1\t2\n'), MIME.csv);
    expect(texts(tabs, 'row')).toEqual(['1,2']);
  });

  it('keeps a header-only file as a paragraph', async () => {
    const doc = await parseDocument(Buffer.from('only,a,header\n'), MIME.csv);
    expect(texts(doc)).toEqual(['only,a,header']);
  });

  it('fails a 10 MB single line with content-too-large', async () => {
    const error = await parseError(longLineCsv(10 * 1024 * 1024), MIME.csv);
    expect(error.code).toBe('content-too-large');
    expect(error.message).toMatch(/record is longer than/);
  });

  it('fails a quoted field that never closes within the record limit', async () => {
    const bytes = Buffer.concat([Buffer.from('a,b\n"'), Buffer.alloc(3 * 1024 * 1024, 'y')]);
    expect((await parseError(bytes, MIME.csv)).code).toBe('content-too-large');
  });
});

describe('JSON', () => {
  it('writes one field block per leaf with its path, keeping keys with values', async () => {
    const doc = await parseDocument(fixture('nested.json'), MIME.json);
    expectConsistent(doc);
    const fields = texts(doc, 'field');
    expect(fields).toContain('$.company: Northwind Trading');
    expect(fields).toContain('$.users[0].name: Alice');
    expect(fields).toContain('$.users[0].tags[1]: billing');
    expect(fields).toContain('$.users[1].tags: []');
    expect(fields).toContain('$.users[2].name: Chloé');
    expect(fields).toContain('$.users[2].manager: null');
    expect(fields).toContain('$.headquarters.address.zip: 98101');
    expect(fields).toContain('$.settings["theme color"]: dark');
    expect(fields).toContain('$.archived: {}');
    const alice = doc.blocks.find((b) => blockText(doc, b) === '$.users[0].name: Alice');
    expect(alice?.section).toBe('$.users[0]');
    // Document order is kept.
    expect(fields.indexOf('$.company: Northwind Trading')).toBeLessThan(fields.indexOf('$.archived: {}'));
  });

  it('turns subtrees below the block depth into one compact field', async () => {
    const doc = await parseDocument(Buffer.from('{"a":{"b":{"c":{"d":1}}}}'), MIME.json, {
      limits: { jsonBlockDepth: 2 },
    });
    expect(texts(doc)).toEqual(['$.a.b: {"c":{"d":1}}']);
  });

  it('fails a 100,000-level nesting fast with content-too-large, without overflowing the stack', async () => {
    const error = await parseError(deeplyNestedJson(100_000), MIME.json);
    expect(error.code).toBe('content-too-large');
    expect(error.message).toMatch(/nested deeper than/);
  });

  it('fails an array of ten million values before parsing it', async () => {
    const error = await parseError(hugeJsonArray(10_000_000), MIME.json);
    expect(error.code).toBe('content-too-large');
  });

  it('reports invalid JSON as corrupt-file', async () => {
    expect((await parseError(Buffer.from('{"a": }'), MIME.json)).code).toBe('corrupt-file');
  });
});

describe('dispatch', () => {
  it('refuses a type it has no parser for', async () => {
    expect((await parseError(Buffer.from('x'), 'image/png')).code).toBe('unsupported-content');
  });
});
