import { describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { MIME } from '../../../core/parsing/detect-type.ts';
import type { OcrEngine } from '../../../core/parsing/ocr.ts';
import { parseDocument } from '../../../core/parsing/parse-document.ts';
import { fixture } from '../../fixtures/hostile-files.ts';

/** An OCR engine that must not be reached. */
const unusedOcr: OcrEngine = {
  recognize: () => Promise.reject(new Error('OCR should not run')),
  terminate: () => Promise.resolve(),
};

describe('PDF parser in the calling thread', () => {
  it('keeps the text pages and warns about an image-only page when OCR is off', async () => {
    const doc = await parseDocument(fixture('mixed.pdf'), MIME.pdf, { ocr: null });
    expect(doc.pageCount).toBe(3);
    expect([...new Set(doc.blocks.map((b) => b.page))]).toEqual([1, 2]);
    expect(doc.warnings).toEqual(['Page 3 has no text layer and OCR is off.']);
  });

  it('skips OCR once the deadline has passed, keeping what it has', async () => {
    const doc = await parseDocument(fixture('mixed.pdf'), MIME.pdf, { ocr: unusedOcr, ocrDeadline: Date.now() - 1 });
    expect([...new Set(doc.blocks.map((b) => b.page))]).toEqual([1, 2]);
    expect(doc.warnings).toEqual(["Page 3 was not OCR'd: the time budget for OCR was used up."]);
  });

  it('fails a scanned document with no-text when nothing could be read', async () => {
    const error = await parseDocument(fixture('scanned.pdf'), MIME.pdf, { ocr: null }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KbError);
    expect((error as KbError).code).toBe('no-text');
  });

  it('fails a document over the page limit with content-too-large', async () => {
    const error = await parseDocument(fixture('multipage.pdf'), MIME.pdf, { limits: { maxPdfPages: 2 } }).catch(
      (e: unknown) => e,
    );
    expect((error as KbError).code).toBe('content-too-large');
  });
});
