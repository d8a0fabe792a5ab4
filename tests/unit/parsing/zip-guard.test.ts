import { describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { guardZip, readCentralDirectory } from '../../../core/parsing/zip-guard.ts';
import { buildZip, fixture, manyRowsXlsx } from '../../fixtures/hostile-files.ts';

async function guardError(
  bytes: Buffer,
  ...args: Parameters<typeof guardZip> extends [unknown, ...infer R] ? R : never
) {
  const error = await guardZip(bytes, ...args).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KbError);
  return error as KbError;
}

describe('zip guard', () => {
  it('passes the real DOCX and XLSX and reports their entries and inflated size', async () => {
    const docx = await guardZip(fixture('report.docx'));
    expect(docx.entries.map((e) => e.name)).toContain('word/document.xml');
    expect(docx.totalBytes).toBe(docx.entries.reduce((sum, e) => sum + e.uncompressedSize, 0));
    const xlsx = await guardZip(fixture('workbook.xlsx'));
    expect(xlsx.entries.map((e) => e.name)).toContain('xl/workbook.xml');
  });

  it('rejects an entry that declares more than the limit, before inflating anything', async () => {
    const error = await guardError(fixture('docx-bomb.docx'));
    expect(error.code).toBe('decompression-bomb');
    expect(error.message).toMatch(/word\/media\/filler\.bin declares 300 MiB/);
    expect((await guardError(fixture('xlsx-bomb.xlsx'))).code).toBe('decompression-bomb');
  });

  it('catches an entry whose headers lie about its size while inflating it', async () => {
    const entries = readCentralDirectory(fixture('docx-bomb-lying.docx'));
    expect(entries.find((e) => e.name === 'word/media/filler.bin')?.uncompressedSize).toBe(4096);
    const error = await guardError(fixture('docx-bomb-lying.docx'));
    expect(error.code).toBe('decompression-bomb');
    expect(error.message).toMatch(/beyond its declared size/);
  });

  it('stops at the real total even when every declared size is within limits', async () => {
    const zip = buildZip([{ name: 'a.bin', data: Buffer.alloc(8 * 1024 * 1024) }]);
    // Claim 1,000 bytes in both the central directory and the local header.
    const cd = zip.readUInt32LE(zip.length - 6);
    zip.writeUInt32LE(1000, cd + 24);
    zip.writeUInt32LE(1000, 22);
    const error = await guardError(zip, {
      limits: { maxTotalBytes: 5 * 1024 * 1024, maxEntryBytes: 6 * 1024 * 1024, ratioMinBytes: 64 * 1024 * 1024 },
    });
    expect(error.code).toBe('decompression-bomb');
    expect(error.message).toMatch(/archive inflates past 5 MiB/);
  });

  it('rejects too many entries and absurd compression ratios', async () => {
    const many = buildZip(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from('x') })));
    expect((await guardError(many, { limits: { maxEntries: 20 } })).code).toBe('decompression-bomb');
    const dense = buildZip([{ name: 'zeros.bin', data: Buffer.alloc(8 * 1024 * 1024) }]);
    const error = await guardError(dense);
    expect(error.code).toBe('decompression-bomb');
    expect(error.message).toMatch(/compression ratio/);
  });

  it('rejects XML parts that declare a DTD (billion laughs)', async () => {
    const error = await guardError(fixture('billion-laughs.docx'));
    expect(error.code).toBe('unsupported-content');
    expect(error.message).toMatch(/word\/document\.xml declares a DTD/);
  });

  it('finds a DTD marker split across inflate chunks', async () => {
    const padding = ' '.repeat(64 * 1024 - 5);
    const zip = buildZip([
      { name: 'part.xml', data: Buffer.from(`<?xml version="1.0"?>${padding}<!DOCTYPE x []><x/>`) },
    ]);
    expect((await guardError(zip)).code).toBe('unsupported-content');
  });

  it('reports a truncated archive, a missing local header and garbage as corrupt-file', async () => {
    const docx = fixture('report.docx');
    expect((await guardError(docx.subarray(0, docx.length - 40))).code).toBe('corrupt-file');
    expect((await guardError(Buffer.from('not a zip at all, just some text that is long enough'))).code).toBe(
      'corrupt-file',
    );
    const broken = Buffer.from(docx);
    broken.writeUInt32LE(0, 0); // the first local header's signature
    expect((await guardError(broken)).code).toBe('corrupt-file');
  });

  it('reports an encrypted entry as encrypted-file', async () => {
    const zip = buildZip([{ name: 'secret.xml', data: Buffer.from('<x/>') }]);
    const cd = zip.readUInt32LE(zip.length - 6);
    zip.writeUInt16LE(zip.readUInt16LE(cd + 8) | 1, cd + 8);
    expect((await guardError(zip)).code).toBe('encrypted-file');
  });

  it('lets an inspector see every inflated byte of an entry and abort the guard', async () => {
    const sheet = manyRowsXlsx(5000);
    let seen = 0;
    await guardZip(sheet, {
      inspect: (entry) =>
        entry.name === 'xl/worksheets/sheet1.xml'
          ? (chunk) => {
              seen += chunk.length;
            }
          : undefined,
    });
    const declared = readCentralDirectory(sheet).find((e) => e.name === 'xl/worksheets/sheet1.xml');
    expect(seen).toBe(declared?.uncompressedSize);
    const error = await guardError(sheet, {
      inspect: () => () => {
        throw new KbError('content-too-large', 'stop');
      },
    });
    expect(error.code).toBe('content-too-large');
  });
});
