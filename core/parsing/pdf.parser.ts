import { createRequire } from 'node:module';
import path from 'node:path';
import { PDFParse } from 'pdf-parse';
import { KbError } from '../errors/kb-error.ts';
import {
  createDocumentBuilder,
  DEFAULT_OUTPUT_LIMITS,
  type OutputLimits,
  splitParagraphs,
} from './document-builder.ts';
import type { OcrEngine } from './ocr.ts';
import { PDF_DEFAULTS } from './parse-limits.ts';
import type { ParsedDocument } from './parsed-document.ts';

export interface PdfOptions {
  readonly limits?: OutputLimits;
  /** OCR for pages without a text layer; null turns OCR off. */
  readonly ocr?: OcrEngine | null;
  /** Most pages; longer documents fail with `content-too-large`. */
  readonly maxPages?: number;
  /** Most pages OCR'd per document; later image-only pages are skipped with a warning. */
  readonly maxOcrPages?: number;
  /**
   * Epoch milliseconds after which no further page is OCR'd (skipped pages get a warning), so a
   * long scanned document ends with the pages done so far instead of hitting the task timeout.
   */
  readonly ocrDeadline?: number;
  /** Width in pixels a page is rendered at for OCR. */
  readonly ocrRenderWidth?: number;
  /** A page with fewer non-space characters than this counts as having no text layer. */
  readonly minPageChars?: number;
  /** Largest decoded image in pixels; larger images are skipped by the renderer. */
  readonly maxImagePixels?: number;
}

let resources: { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } | null = null;

/** Font, CMap and wasm folders of the pdf.js build that pdf-parse ships with, as local paths. */
function pdfjsResources(): { standardFontDataUrl: string; cMapUrl: string; wasmUrl: string } {
  if (resources === null) {
    const fromPdfParse = createRequire(createRequire(import.meta.url).resolve('pdf-parse'));
    const root = path.dirname(fromPdfParse.resolve('pdfjs-dist/package.json'));
    resources = {
      standardFontDataUrl: `${path.join(root, 'standard_fonts')}${path.sep}`,
      cMapUrl: `${path.join(root, 'cmaps')}${path.sep}`,
      wasmUrl: `${path.join(root, 'wasm')}${path.sep}`,
    };
  }
  return resources;
}

/** Maps pdf.js / pdf-parse exceptions to catalogue errors. */
export function pdfError(error: unknown): KbError {
  if (error instanceof KbError) return error;
  const name = (error as { name?: string } | null)?.name ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') return new KbError('encrypted-file', 'The PDF is password-protected.');
  if (name === 'InvalidPDFException') return new KbError('corrupt-file', `The PDF is invalid: ${message}`);
  return new KbError('corrupt-file', `The PDF could not be read: ${message}`);
}

const nonSpaceLength = (text: string): number => text.replace(/\s+/g, '').length;

/**
 * PDF with pdf-parse: text per page, every block carrying its 1-based `page`. A page with fewer
 * than `minPageChars` non-space characters that shows an image is rendered and OCR'd (blocks get
 * `ocr: true`), so a mixed document yields both kinds. A password-protected file is
 * `encrypted-file`; a malformed one `corrupt-file`.
 */
export async function parsePdf(bytes: Uint8Array, options: PdfOptions = {}): Promise<ParsedDocument> {
  const maxPages = options.maxPages ?? PDF_DEFAULTS.maxPages;
  const maxOcrPages = options.maxOcrPages ?? PDF_DEFAULTS.maxOcrPages;
  const minPageChars = options.minPageChars ?? PDF_DEFAULTS.minPageChars;
  const ocr = options.ocr ?? null;
  const parser = new PDFParse({
    data: new Uint8Array(bytes),
    verbosity: 0,
    isEvalSupported: false,
    stopAtErrors: false,
    maxImageSize: options.maxImagePixels ?? PDF_DEFAULTS.maxImagePixels,
    useSystemFonts: false,
    disableFontFace: true,
    ...pdfjsResources(),
  });
  try {
    const info = await parser.getInfo().catch((error: unknown) => {
      throw pdfError(error);
    });
    if (info.total > maxPages) {
      throw new KbError('content-too-large', `The PDF has ${info.total} pages; the limit is ${maxPages}.`);
    }
    const result = await parser.getText({ pageJoiner: '' }).catch((error: unknown) => {
      throw pdfError(error);
    });

    const builder = createDocumentBuilder(options.limits ?? DEFAULT_OUTPUT_LIMITS);
    let ocrPages = 0;
    for (const page of result.pages) {
      const text = page.text ?? '';
      if (nonSpaceLength(text) < minPageChars) {
        const hasImage = await pageHasImage(parser, page.num);
        if (hasImage && ocr === null) {
          builder.warn(`Page ${page.num} has no text layer and OCR is off.`);
        } else if (hasImage && ocrPages >= maxOcrPages) {
          builder.warn(`Page ${page.num} was not OCR'd: the limit is ${maxOcrPages} pages per document.`);
        } else if (hasImage && options.ocrDeadline !== undefined && Date.now() > options.ocrDeadline) {
          builder.warn(`Page ${page.num} was not OCR'd: the time budget for OCR was used up.`);
        } else if (hasImage && ocr !== null) {
          ocrPages += 1;
          const recognised = await ocrPage(
            parser,
            ocr,
            page.num,
            options.ocrRenderWidth ?? PDF_DEFAULTS.ocrRenderWidth,
          );
          if (nonSpaceLength(recognised) > 0) {
            for (const paragraph of splitParagraphs(recognised)) {
              builder.block('paragraph', paragraph, { page: page.num, ocr: true });
            }
            continue;
          }
          builder.warn(`OCR found no text on page ${page.num}.`);
        }
      }
      for (const paragraph of splitParagraphs(text.replace(/[ \t]+\n/g, '\n'))) {
        builder.block('paragraph', paragraph, { page: page.num });
      }
    }
    return builder.build(result.total);
  } finally {
    await parser.destroy().catch(() => {});
  }
}

async function pageHasImage(parser: PDFParse, page: number): Promise<boolean> {
  try {
    const images = await parser.getImage({ partial: [page], imageBuffer: false, imageDataUrl: false });
    return images.pages.some((p) => p.images.length > 0);
  } catch {
    return false;
  }
}

async function ocrPage(parser: PDFParse, ocr: OcrEngine, page: number, width: number): Promise<string> {
  const shot = await parser
    .getScreenshot({ partial: [page], desiredWidth: width, imageBuffer: true, imageDataUrl: false })
    .catch((error: unknown) => {
      throw pdfError(error);
    });
  const image = shot.pages[0]?.data;
  if (!image || image.length === 0) return '';
  const { text } = await ocr.recognize(image);
  return text.replace(/[ \t]+\n/g, '\n').trim();
}
