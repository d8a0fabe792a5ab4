import { KbError } from '../errors/kb-error.ts';
import { DEFAULT_CSV_LIMITS, parseCsv } from './csv.parser.ts';
import { MIME } from './detect-type.ts';
import { DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './document-builder.ts';
import { DEFAULT_JSON_LIMITS, parseJson } from './json.parser.ts';
import { parseMarkdown } from './markdown.parser.ts';
import type { OcrEngine } from './ocr.ts';
import { DEFAULT_MAX_SHEET_ROWS, PDF_DEFAULTS } from './parse-limits.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { parseText } from './text.parser.ts';
import { DEFAULT_ZIP_LIMITS, type ZipGuardLimits } from './zip-guard.ts';

/** Every parsing limit in one place; each has a default. */
export interface ParseLimits extends OutputLimits {
  /** CSV: longest record in characters. */
  readonly maxCsvRecordChars: number;
  /** JSON: deepest nesting accepted. */
  readonly maxJsonNesting: number;
  /** JSON: nesting down to which every leaf gets its own block. */
  readonly jsonBlockDepth: number;
  /** XLSX: most rows over all sheets. */
  readonly maxSheetRows: number;
  /** PDF: most pages. */
  readonly maxPdfPages: number;
  /** PDF: most pages OCR'd per document. */
  readonly maxOcrPages: number;
  /** OOXML zip guard. */
  readonly zip: ZipGuardLimits;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  ...DEFAULT_OUTPUT_LIMITS,
  maxCsvRecordChars: DEFAULT_CSV_LIMITS.maxRecordChars,
  maxJsonNesting: DEFAULT_JSON_LIMITS.maxNesting,
  jsonBlockDepth: DEFAULT_JSON_LIMITS.blockDepth,
  maxSheetRows: DEFAULT_MAX_SHEET_ROWS,
  maxPdfPages: PDF_DEFAULTS.maxPages,
  maxOcrPages: PDF_DEFAULTS.maxOcrPages,
  zip: DEFAULT_ZIP_LIMITS,
};

/** Limits given as overrides: any field may be left out, `zip` too, field by field. */
export type ParseLimitOverrides = Partial<Omit<ParseLimits, 'zip'>> & { readonly zip?: Partial<ZipGuardLimits> };

export function resolveParseLimits(overrides: ParseLimitOverrides = {}): ParseLimits {
  return { ...DEFAULT_PARSE_LIMITS, ...overrides, zip: { ...DEFAULT_ZIP_LIMITS, ...overrides.zip } };
}

export interface ParseDocumentOptions {
  /** OCR for PDF pages without a text layer; null or absent turns it off. */
  readonly ocr?: OcrEngine | null;
  readonly limits?: ParseLimitOverrides;
  /** Epoch milliseconds after which PDF pages are no longer OCR'd (see `PdfOptions.ocrDeadline`). */
  readonly ocrDeadline?: number;
}

/**
 * Parses a file of one of the accepted MIME types into a {@link ParsedDocument}, in the calling
 * thread. Use the parse pool (`core/workers/parse-pool.ts`) to run this with a timeout and
 * memory limits. Throws KbError: `unsupported-content` for another type, and each parser's codes.
 */
export async function parseDocument(
  bytes: Uint8Array,
  mimeType: string,
  options: ParseDocumentOptions = {},
): Promise<ParsedDocument> {
  const limits = resolveParseLimits(options.limits);
  const output: OutputLimits = { maxTextChars: limits.maxTextChars, maxBlocks: limits.maxBlocks };
  const type = mimeType.split(';')[0]?.trim().toLowerCase();
  switch (type) {
    case MIME.text:
      return parseText(bytes, output);
    case MIME.markdown:
      return parseMarkdown(bytes, output);
    case MIME.csv:
      return parseCsv(bytes, { ...output, maxRecordChars: limits.maxCsvRecordChars });
    case MIME.json:
      return parseJson(bytes, { ...output, maxNesting: limits.maxJsonNesting, blockDepth: limits.jsonBlockDepth });
    // The heavy parsers load on first use, so a fresh thread starts fast.
    case MIME.pdf:
      return (await import('./pdf.parser.ts')).parsePdf(bytes, {
        limits: output,
        ocr: options.ocr ?? null,
        maxPages: limits.maxPdfPages,
        maxOcrPages: limits.maxOcrPages,
        ...(options.ocrDeadline === undefined ? {} : { ocrDeadline: options.ocrDeadline }),
      });
    case MIME.docx:
      return (await import('./docx.parser.ts')).parseDocx(bytes, { limits: output, zipLimits: limits.zip });
    case MIME.xlsx:
      return (await import('./xlsx.parser.ts')).parseXlsx(bytes, {
        limits: output,
        zipLimits: limits.zip,
        maxRows: limits.maxSheetRows,
      });
    default:
      throw new KbError('unsupported-content', `No parser for the type ${mimeType}.`);
  }
}
