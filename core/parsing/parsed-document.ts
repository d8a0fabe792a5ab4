/**
 * What a parser hands to the chunker: the document's plain text plus its structure as blocks
 * that point into that text. Shared by every parser (txt, md, csv, json, pdf, docx, xlsx).
 */
export type BlockKind =
  /** A heading; `level` 1–6. Preferred chunk boundary. */
  | 'heading'
  | 'paragraph'
  | 'list-item'
  | 'code'
  /** One table row (CSV/XLSX); `header` holds the table's header line, repeated into every chunk of rows. */
  | 'row'
  /** A JSON leaf or small object, `path` holds its JSON path (e.g. `$.users[3].name`). */
  | 'field';

export interface TextBlock {
  readonly kind: BlockKind;
  /** Start offset in `ParsedDocument.text` (UTF-16 code units, inclusive). */
  readonly start: number;
  /** End offset in `ParsedDocument.text` (exclusive). */
  readonly end: number;
  /** 1-based page number (PDF), or null. */
  readonly page: number | null;
  /** Heading level 1–6 for `heading`. */
  readonly level?: number;
  /** Table header line for `row` blocks (not part of `text` at this block's position). */
  readonly header?: string;
  /** Section the block belongs to: sheet name (XLSX), JSON path (JSON). */
  readonly section?: string;
  /** True when the text came from OCR. */
  readonly ocr?: boolean;
}

export interface ParsedDocument {
  /** The whole extracted text. Blocks are ordered, non-overlapping ranges of it. */
  readonly text: string;
  readonly blocks: readonly TextBlock[];
  /** Number of pages (PDF), else null. */
  readonly pageCount: number | null;
  /** Non-fatal notes, e.g. pages whose OCR found nothing. */
  readonly warnings: readonly string[];
}

/** The MIME types the service accepts (README, "Formats, limits and hostile input"). */
export const ALLOWED_MIME_TYPES = [
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/pdf',
  'application/json',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
] as const;
export type AllowedMimeType = (typeof ALLOWED_MIME_TYPES)[number];
