import { KbError } from '../errors/kb-error.ts';
import type { BlockKind, ParsedDocument, TextBlock } from './parsed-document.ts';

/** Size limits every parser enforces while building its output. */
export interface OutputLimits {
  /** Most characters of extracted text. */
  readonly maxTextChars: number;
  /** Most blocks. */
  readonly maxBlocks: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = {
  maxTextChars: 64 * 1024 * 1024,
  maxBlocks: 1_000_000,
};

export interface BlockMeta {
  readonly page?: number | null;
  readonly level?: number;
  readonly header?: string;
  readonly section?: string;
  readonly ocr?: boolean;
}

export interface DocumentBuilder {
  /**
   * Appends `text` as one block, preceded by `separator` when the document is not empty. Blank
   * text is skipped. Throws `content-too-large` past the limits.
   */
  block(kind: BlockKind, text: string, meta?: BlockMeta, separator?: string): void;
  /** Appends text that belongs to no block (e.g. a table's header line). */
  raw(text: string, separator?: string): void;
  warn(message: string): void;
  readonly blockCount: number;
  readonly length: number;
  /** Finishes the document; throws `no-text` when nothing but whitespace was extracted. */
  build(pageCount?: number | null): ParsedDocument;
}

/** Collects text pieces and blocks, keeping offsets consistent with the final `text`. */
export function createDocumentBuilder(limits: OutputLimits = DEFAULT_OUTPUT_LIMITS): DocumentBuilder {
  const parts: string[] = [];
  const blocks: TextBlock[] = [];
  const warnings: string[] = [];
  let length = 0;

  const append = (piece: string): void => {
    if (piece.length === 0) return;
    if (length + piece.length > limits.maxTextChars) {
      throw new KbError('content-too-large', `Extracted text exceeds the limit of ${limits.maxTextChars} characters.`);
    }
    parts.push(piece);
    length += piece.length;
  };

  return {
    block(kind, text, meta = {}, separator = '\n\n') {
      if (text.trim() === '') return;
      if (blocks.length >= limits.maxBlocks) {
        throw new KbError('content-too-large', `The document has more than ${limits.maxBlocks} text blocks.`);
      }
      if (length > 0) append(separator);
      const start = length;
      append(text);
      const block: TextBlock = {
        kind,
        start,
        end: length,
        page: meta.page ?? null,
        ...(meta.level === undefined ? {} : { level: meta.level }),
        ...(meta.header === undefined ? {} : { header: meta.header }),
        ...(meta.section === undefined ? {} : { section: meta.section }),
        ...(meta.ocr ? { ocr: true } : {}),
      };
      blocks.push(block);
    },
    raw(text, separator = '\n\n') {
      if (text.trim() === '') return;
      if (length > 0) append(separator);
      append(text);
    },
    warn(message) {
      if (warnings.length < 100) warnings.push(message);
    },
    get blockCount() {
      return blocks.length;
    },
    get length() {
      return length;
    },
    build(pageCount = null) {
      const text = parts.join('');
      if (blocks.length === 0 || text.trim() === '') {
        throw new KbError('no-text', 'No text could be extracted from the file.');
      }
      return { text, blocks, pageCount, warnings };
    },
  };
}

/** Splits text on blank lines into trimmed paragraphs (lines within a paragraph are kept). */
export function splitParagraphs(text: string): string[] {
  return text
    .split(/\n[ \t\f\v\u00a0]*\n/)
    .map((p) => p.replace(/^\s*\n/, '').trimEnd())
    .filter((p) => p.trim() !== '');
}

/** Normalises line endings to `\n` and drops a leading byte-order mark. */
export function normaliseNewlines(text: string): string {
  return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
}
