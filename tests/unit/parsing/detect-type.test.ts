import { describe, expect, it } from 'vitest';
import {
  createContentSniffer,
  type Detection,
  detectType,
  MIME,
  SNIFF_HEAD_BYTES,
  sniffBytes,
} from '../../../core/parsing/detect-type.ts';
import { createJsonScanner, jsonShape, scanJson } from '../../../core/parsing/json-scan.ts';
import { buildZip, deeplyNestedJson, fixture } from '../../fixtures/hostile-files.ts';

/** Detects a whole in-memory file the way the upload path does: sniff, then decide. */
function detect(bytes: Buffer, hints: { filename?: string; declaredType?: string } = {}): Detection {
  const sniff = sniffBytes(bytes);
  return detectType(sniff.head, hints, sniff);
}

describe('content sniffer', () => {
  it('keeps only the head of a large stream and validates UTF-8 across chunk boundaries', () => {
    const text = Buffer.from('héllo wörld ✓ '.repeat(20_000));
    const sniffer = createContentSniffer();
    // Odd chunk sizes split multi-byte characters between chunks.
    for (let i = 0; i < text.length; i += 4093) sniffer.update(text.subarray(i, i + 4093));
    const result = sniffer.finish();
    expect(result.size).toBe(text.length);
    expect(result.head.length).toBe(SNIFF_HEAD_BYTES);
    expect(result.head.equals(text.subarray(0, SNIFF_HEAD_BYTES))).toBe(true);
    expect(result.utf8Valid).toBe(true);
    expect(result.hasNul).toBe(false);
  });

  it('reports invalid UTF-8, a NUL byte and a sequence cut off at the end', () => {
    expect(sniffBytes(Buffer.from([0x61, 0xc3, 0x28])).utf8Valid).toBe(false);
    expect(sniffBytes(Buffer.from('abc\0def')).hasNul).toBe(true);
    const cut = createContentSniffer();
    cut.update(Buffer.from([0x61, 0xe2, 0x9c]));
    expect(cut.finish().utf8Valid).toBe(false);
  });

  it('validates JSON incrementally, whatever the chunking', () => {
    const json = Buffer.from('{"a": [1, 2.5e-3, -0, true, null, "x\\u00e9\\n"], "b": {}}');
    const sniffer = createContentSniffer();
    for (const byte of json) sniffer.update(Buffer.from([byte]));
    const result = sniffer.finish();
    expect(result.jsonValid).toBe(true);
    expect(result.jsonDepth).toBe(2);
  });
});

describe('JSON scanner', () => {
  it.each([
    ['{}', true],
    ['[1,2,3]', true],
    ['\ufeff {"k": "v"} ', true],
    ['"just a string"', true],
    ['42', true],
    ['{"a":1,}', false],
    ['[1 2]', false],
    ['{"a" 1}', false],
    ['01', false],
    ['[1.]', false],
    ['{"a":1}{}', false],
    ['["unterminated]', false],
    ['tru', false],
    ['{"tab":"a\tb"}', false],
  ])('%j valid=%s', (text, valid) => {
    expect(scanJson(Buffer.from(text)).valid).toBe(valid);
  });

  it('checks a 100,000-level nesting without recursion', () => {
    const result = scanJson(deeplyNestedJson(100_000));
    expect(result).toEqual({ valid: true, maxDepth: 100_000 });
    const scanner = createJsonScanner();
    scanner.update(Buffer.from('[[['));
    expect(scanner.finish().valid).toBe(false);
  });

  it('measures depth and values while skipping strings', () => {
    expect(jsonShape('{"a": "[[[,,,", "b": [1, 2, 3]}')).toEqual({ depth: 2, values: 6 });
  });
});

describe('detectType', () => {
  it('rejects a PNG named .txt with its real type', () => {
    expect(detect(fixture('picture-named.txt'), { filename: 'notes.txt', declaredType: 'text/plain' })).toEqual({
      rejected: 'image/png',
    });
  });

  it('rejects random binary data named .txt as application/octet-stream', () => {
    expect(detect(fixture('binary-named.txt'), { filename: 'data.txt' })).toEqual({
      rejected: 'application/octet-stream',
    });
  });

  it('rejects text containing NUL bytes', () => {
    expect(detect(Buffer.from('hello\0world'), { filename: 'a.txt' })).toEqual({
      rejected: 'application/octet-stream',
    });
  });

  it('takes UTF-16 with a byte order mark as text, Markdown or CSV by its hints', () => {
    const le = Buffer.from('\ufeffhello, world\nsecond, line\n', 'utf16le');
    const be = Buffer.from(le).swap16();
    expect(detect(le, { filename: 'a.txt' })).toEqual({ mimeType: MIME.text });
    expect(detect(be, { filename: 'a' })).toEqual({ mimeType: MIME.text });
    expect(detect(le, { filename: 'a.md' })).toEqual({ mimeType: MIME.markdown });
    expect(detect(be, { filename: 'a', declaredType: 'text/csv; charset=utf-16' })).toEqual({ mimeType: MIME.csv });
  });

  it('detects PDF, DOCX and XLSX from content even under a wrong name', () => {
    expect(detect(fixture('multipage.pdf'), { filename: 'report.docx' })).toEqual({ mimeType: MIME.pdf });
    expect(detect(fixture('report.docx'), { filename: 'sheet.xlsx', declaredType: MIME.xlsx })).toEqual({
      mimeType: MIME.docx,
    });
    expect(detect(fixture('workbook.xlsx'), { filename: 'workbook.pdf' })).toEqual({ mimeType: MIME.xlsx });
  });

  it('sees the inner parts from the local headers in the head only', () => {
    const head = fixture('workbook.xlsx').subarray(0, 2048);
    expect(detectType(head, { filename: 'x.bin' }, { utf8Valid: false })).toEqual({ mimeType: MIME.xlsx });
  });

  it('reads [Content_Types].xml from the head when the main part lies beyond it', () => {
    const contentTypes = Buffer.from(
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ' +
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    );
    // Incompressible filler (xorshift) pushes the next local header past the head.
    let state = 2463534242;
    const noise = Buffer.alloc(200_000);
    for (let i = 0; i < noise.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      noise[i] = state & 0xff;
    }
    const zip = buildZip([
      { name: '[Content_Types].xml', data: contentTypes },
      { name: 'docProps/thumbnail.bin', data: noise },
      { name: 'word/document.xml', data: Buffer.from('<w:document/>') },
    ]);
    const sniff = sniffBytes(zip);
    expect(sniff.head.includes(Buffer.from('word/document.xml'))).toBe(false);
    expect(detectType(sniff.head, { filename: 'upload.bin' }, sniff)).toEqual({ mimeType: MIME.docx });
  });

  it('rejects a plain zip, and trusts the .docx/.xlsx extension only when the head tells nothing', () => {
    const zip = Buffer.concat([
      Buffer.from([0x50, 0x4b, 0x03, 0x04]),
      Buffer.alloc(22),
      Buffer.from([9, 0, 0, 0]),
      Buffer.from('notes.txthello'),
    ]);
    expect(detect(zip, { filename: 'archive.zip' })).toEqual({ rejected: 'application/zip' });
    expect(detect(zip, { filename: 'archive.docx' })).toEqual({ rejected: 'application/zip' });
    const namesBeyondHead = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]);
    expect(detectType(namesBeyondHead, { filename: 'big.docx' }, { utf8Valid: false })).toEqual({
      mimeType: MIME.docx,
    });
    expect(detectType(namesBeyondHead, { filename: 'big.zip' }, { utf8Valid: false })).toEqual({
      rejected: 'application/zip',
    });
  });

  it('tells JSON from text by validity, asking for a JSON check when it was not given', () => {
    const json = Buffer.from('{"name": "Alice"}');
    expect(detectType(json, {}, { utf8Valid: true })).toEqual({ needsJsonCheck: true });
    expect(detectType(json, {}, { utf8Valid: true, jsonValid: true })).toEqual({ mimeType: MIME.json });
    expect(detect(json, { filename: 'data.txt' })).toEqual({ mimeType: MIME.json });
    expect(detect(Buffer.from('{not json at all'), { filename: 'x.json' })).toEqual({ mimeType: MIME.text });
    expect(detect(Buffer.from('"a json string"'), { filename: 'value.json' })).toEqual({ mimeType: MIME.json });
    expect(detect(Buffer.from('"a quoted line"'), { filename: 'line.txt' })).toEqual({ mimeType: MIME.text });
  });

  it('uses the hint for markdown and CSV, and recognises clearly delimited rows', () => {
    expect(detect(fixture('sample.md'), { filename: 'garden.md' })).toEqual({ mimeType: MIME.markdown });
    expect(detect(fixture('sample.md'), { declaredType: 'text/markdown; charset=utf-8' })).toEqual({
      mimeType: MIME.markdown,
    });
    expect(detect(fixture('sample.md'), { filename: 'garden.txt' })).toEqual({ mimeType: MIME.text });
    expect(detect(fixture('quoted.csv'), { filename: 'people.csv' })).toEqual({ mimeType: MIME.csv });
    expect(detect(fixture('large.csv'), { filename: 'export' })).toEqual({ mimeType: MIME.csv });
    expect(detect(fixture('large.csv'), { filename: 'export.txt' })).toEqual({ mimeType: MIME.text });
    expect(detect(fixture('plain.txt'), {})).toEqual({ mimeType: MIME.text });
  });
});
