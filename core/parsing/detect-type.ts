import { inflateRawSync } from 'node:zlib';
import { createJsonScanner } from './json-scan.ts';
import type { AllowedMimeType } from './parsed-document.ts';
import { utf16ByteOrder } from './text-decode.ts';
import { createUtf8Validator } from './utf8-validator.ts';

/** Bytes of the file's start that the sniffer keeps for magic-byte and zip inspection. */
export const SNIFF_HEAD_BYTES = 64 * 1024;

export const MIME = {
  text: 'text/plain',
  markdown: 'text/markdown',
  csv: 'text/csv',
  pdf: 'application/pdf',
  json: 'application/json',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const satisfies Record<string, AllowedMimeType>;

/** What the sniffer learned from the whole stream, without keeping it. */
export interface SniffResult {
  /** The first {@link SNIFF_HEAD_BYTES} bytes (fewer for a smaller file). */
  readonly head: Buffer;
  /** Total bytes seen. */
  readonly size: number;
  /** The whole stream is valid UTF-8 (a leading BOM allowed). */
  readonly utf8Valid: boolean;
  /** The stream contains a NUL byte. */
  readonly hasNul: boolean;
  /** The whole stream is exactly one valid JSON value (grammar only; see `utf8Valid` for encoding). */
  readonly jsonValid: boolean;
  /** Deepest array/object nesting seen by the JSON check (0 when the stream is not JSON-like). */
  readonly jsonDepth: number;
}

export interface ContentSniffer {
  /** Feeds the next chunk of the file. Chunks are not retained beyond the head. */
  update(chunk: Uint8Array): void;
  /** Ends the stream and reports. Call once. */
  finish(): SniffResult;
}

/**
 * Creates an incremental sniffer for the upload path: feed it every chunk as the file streams to
 * storage, then pass `finish()`'s result to {@link detectType}. It keeps only the head, validates
 * UTF-8 without decoding (`buffer.isUtf8` per chunk, a sequence cut at a chunk's end carried over),
 * looks for NUL bytes and validates JSON grammar, all in constant memory (apart from the JSON
 * nesting stack: one byte per level).
 */
export function createContentSniffer(options: { headBytes?: number } = {}): ContentSniffer {
  const headLimit = options.headBytes ?? SNIFF_HEAD_BYTES;
  const headParts: Buffer[] = [];
  let headSize = 0;
  let size = 0;
  let utf8Valid = true;
  let hasNul = false;
  const utf8 = createUtf8Validator();
  const json = createJsonScanner();
  let finished = false;

  return {
    update(chunk: Uint8Array): void {
      if (finished) throw new Error('sniffer already finished');
      if (chunk.length === 0) return;
      size += chunk.length;
      if (headSize < headLimit) {
        const take = Math.min(headLimit - headSize, chunk.length);
        headParts.push(Buffer.from(chunk.subarray(0, take)));
        headSize += take;
      }
      if (!hasNul && chunk.indexOf(0) !== -1) hasNul = true;
      if (utf8Valid) {
        utf8.update(chunk);
        // Only a definite failure counts here; an unfinished sequence is settled by `finish`.
        if (!utf8.valid) utf8Valid = false;
      }
      if (utf8Valid && !hasNul) json.update(chunk);
    },
    finish(): SniffResult {
      if (finished) throw new Error('sniffer already finished');
      finished = true;
      if (utf8Valid) utf8Valid = utf8.finish();
      const scan = json.finish();
      return {
        head: Buffer.concat(headParts, headSize),
        size,
        utf8Valid,
        hasNul,
        jsonValid: utf8Valid && !hasNul && scan.valid,
        jsonDepth: scan.maxDepth,
      };
    },
  };
}

/** Convenience for a file already in memory: the same result as streaming it through the sniffer. */
export function sniffBytes(bytes: Uint8Array): SniffResult {
  const sniffer = createContentSniffer();
  sniffer.update(bytes);
  return sniffer.finish();
}

export interface DetectHints {
  /** The multipart part's declared content type, if any (parameters such as `; charset` allowed). */
  readonly declaredType?: string;
  /** The client's file name, used only for its extension. */
  readonly filename?: string;
}

export interface DetectProbe {
  readonly utf8Valid: boolean;
  /** Defaults to a NUL search in `head` when omitted. */
  readonly hasNul?: boolean;
  /** Whether the whole file is valid JSON; omit when unknown and {@link detectType} will ask. */
  readonly jsonValid?: boolean;
}

export type Detection =
  /** The file is of an accepted type. */
  | { readonly mimeType: AllowedMimeType }
  /** The file's real type is not accepted; `rejected` names it (e.g. `image/png`). */
  | { readonly rejected: string }
  /**
   * The file is text whose type depends on whether the whole file is valid JSON: check it
   * (e.g. with `scanJson` over the stored bytes) and call {@link detectType} again with
   * `probe.jsonValid` set. Never returned when `probe.jsonValid` is given.
   */
  | { readonly needsJsonCheck: true };

const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown']);
const CSV_TYPES = new Set(['text/csv', 'application/csv', 'text/comma-separated-values']);
const JSON_TYPES = new Set(['application/json', 'text/json']);

interface Signature {
  readonly offset: number;
  readonly bytes: readonly number[];
  readonly type: string;
  /** A text-based format: rejected even when the file is valid UTF-8. */
  readonly text?: boolean;
}

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/** Binary formats recognised only to name them in a rejection. */
const REJECTED_SIGNATURES: readonly Signature[] = [
  { offset: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], type: 'image/png' },
  { offset: 0, bytes: [0xff, 0xd8, 0xff], type: 'image/jpeg' },
  { offset: 0, bytes: ascii('GIF87a'), type: 'image/gif' },
  { offset: 0, bytes: ascii('GIF89a'), type: 'image/gif' },
  { offset: 8, bytes: ascii('WEBP'), type: 'image/webp' },
  { offset: 0, bytes: [0x49, 0x49, 0x2a, 0x00], type: 'image/tiff' },
  { offset: 0, bytes: [0x4d, 0x4d, 0x00, 0x2a], type: 'image/tiff' },
  { offset: 0, bytes: [0x00, 0x00, 0x01, 0x00], type: 'image/x-icon' },
  { offset: 4, bytes: ascii('ftyp'), type: 'video/mp4' },
  { offset: 0, bytes: ascii('OggS'), type: 'audio/ogg' },
  { offset: 0, bytes: ascii('fLaC'), type: 'audio/flac' },
  { offset: 0, bytes: ascii('ID3'), type: 'audio/mpeg' },
  { offset: 8, bytes: ascii('WAVE'), type: 'audio/wav' },
  { offset: 0, bytes: [0x1a, 0x45, 0xdf, 0xa3], type: 'video/webm' },
  { offset: 0, bytes: [0x1f, 0x8b], type: 'application/gzip' },
  { offset: 0, bytes: ascii('BZh'), type: 'application/x-bzip2' },
  { offset: 0, bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], type: 'application/x-xz' },
  { offset: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd], type: 'application/zstd' },
  { offset: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], type: 'application/x-7z-compressed' },
  { offset: 0, bytes: ascii('Rar!\x1a\x07'), type: 'application/vnd.rar' },
  { offset: 257, bytes: ascii('ustar'), type: 'application/x-tar' },
  { offset: 0, bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], type: 'application/x-ole-storage' },
  { offset: 0, bytes: ascii('{\\rtf'), type: 'application/rtf', text: true },
  { offset: 0, bytes: ascii('%!PS'), type: 'application/postscript', text: true },
  { offset: 0, bytes: [0x7f, 0x45, 0x4c, 0x46], type: 'application/x-executable' },
  { offset: 0, bytes: [0x00, 0x61, 0x73, 0x6d], type: 'application/wasm' },
  { offset: 0, bytes: ascii('SQLite format 3\0'), type: 'application/vnd.sqlite3' },
  { offset: 0, bytes: ascii('wOFF'), type: 'font/woff' },
  { offset: 0, bytes: ascii('wOF2'), type: 'font/woff2' },
];

const startsWithAt = (head: Uint8Array, offset: number, bytes: readonly number[]): boolean => {
  if (head.length < offset + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (head[offset + i] !== bytes[i]) return false;
  return true;
};

const PDF_MAGIC = ascii('%PDF-');
const ZIP_LOCAL = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY = [0x50, 0x4b, 0x05, 0x06];
const ZIP_SPANNED = [0x50, 0x4b, 0x07, 0x08];

/** Lower-cased extension of a file name without the dot, or ''. */
export function fileExtension(filename: string | undefined): string {
  if (!filename) return '';
  const base = filename.replace(/^.*[\\/]/, '');
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

const normaliseDeclared = (declared: string | undefined): string =>
  (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/**
 * Decides a file's type from its content, with the declared type and the extension as hints.
 *
 * - Magic bytes first: `%PDF-` is a PDF (searched within the first 1 KiB, as readers do); a zip is
 *   a DOCX or XLSX when its inner part names (read from the local file headers in `head`, or from
 *   `[Content_Types].xml` when that part is in the head) say so, or — when the head does not tell —
 *   when the extension is `.docx`/`.xlsx` (the OOXML parser fails later if it is not); any other zip
 *   and every known binary format is rejected with its real type.
 * - UTF-16 with a byte order mark is text: Markdown or CSV by hint, else plain text (never JSON,
 *   whose check reads UTF-8); the parsers decode it and refuse it as `corrupt-file` if it is not
 *   valid UTF-16.
 * - Otherwise the file must be UTF-8 without NUL bytes, else it is rejected as
 *   `application/octet-stream`.
 * - Text is JSON when it is valid JSON and either starts with `{`/`[` or is hinted as JSON
 *   (asks with `needsJsonCheck` when `probe.jsonValid` is not given); then markdown by hint, CSV by
 *   hint or by clearly delimited rows, else plain text.
 *
 * An empty head is plain text; rejecting empty uploads is the caller's job.
 */
export function detectType(head: Uint8Array, hints: DetectHints, probe: DetectProbe): Detection {
  const ext = fileExtension(hints.filename);
  const declared = normaliseDeclared(hints.declaredType);

  const hasNul = probe.hasNul ?? head.indexOf(0) !== -1;
  const binary = !probe.utf8Valid || hasNul;

  // Readers accept up to 1 KiB of junk before the header; plain text only counts at offset 0.
  if (startsWithAt(head, 0, PDF_MAGIC) || (binary && indexOfBytes(head.subarray(0, 1024), PDF_MAGIC) !== -1)) {
    return { mimeType: MIME.pdf };
  }

  if (startsWithAt(head, 0, ZIP_LOCAL) || startsWithAt(head, 0, ZIP_EMPTY) || startsWithAt(head, 0, ZIP_SPANNED)) {
    return detectZip(head, ext, declared);
  }

  if (utf16ByteOrder(head) !== null) {
    // UTF-16 text (the parsers decode it by its BOM): Markdown or CSV by hint, else plain text.
    if (ext === 'md' || ext === 'markdown' || MARKDOWN_TYPES.has(declared)) return { mimeType: MIME.markdown };
    if (ext === 'csv' || CSV_TYPES.has(declared)) return { mimeType: MIME.csv };
    return { mimeType: MIME.text };
  }
  for (const sig of REJECTED_SIGNATURES) {
    // Binary signatures only count for a binary body, so text that happens to start alike stays text.
    if ((binary || sig.text) && startsWithAt(head, sig.offset, sig.bytes)) return { rejected: sig.type };
  }

  if (binary) {
    if (startsWithAt(head, 0, ascii('MZ'))) return { rejected: 'application/x-msdownload' };
    return { rejected: 'application/octet-stream' };
  }

  const first = firstNonSpaceByte(head);
  const hintedJson = ext === 'json' || JSON_TYPES.has(declared) || declared.endsWith('+json');
  const looksJson = first === 0x7b || first === 0x5b;
  if (hintedJson || looksJson) {
    if (probe.jsonValid === undefined) return { needsJsonCheck: true };
    if (probe.jsonValid) return { mimeType: MIME.json };
  }

  if (ext === 'md' || ext === 'markdown' || MARKDOWN_TYPES.has(declared)) return { mimeType: MIME.markdown };
  if (ext === 'csv' || CSV_TYPES.has(declared)) return { mimeType: MIME.csv };
  if (ext !== 'txt' && declared !== 'text/plain' && looksDelimited(head)) return { mimeType: MIME.csv };
  return { mimeType: MIME.text };
}

function indexOfBytes(haystack: Uint8Array, needle: readonly number[]): number {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).indexOf(Buffer.from(needle));
}

function firstNonSpaceByte(head: Uint8Array): number {
  let i = startsWithAt(head, 0, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  for (; i < head.length; i++) {
    const b = head[i] as number;
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
  }
  return -1;
}

/** The names of the zip entries whose local headers lie in `head`, plus inflated small parts. */
export function zipEntryNamesInHead(head: Uint8Array): { names: string[]; contentTypes: string | null } {
  const buf = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const names: string[] = [];
  let contentTypes: string | null = null;
  let pos = 0;
  while (pos + 30 <= buf.length) {
    const at = buf.indexOf(Buffer.from(ZIP_LOCAL), pos);
    if (at === -1 || at + 30 > buf.length) break;
    const flags = buf.readUInt16LE(at + 6);
    const method = buf.readUInt16LE(at + 8);
    const compressedSize = buf.readUInt32LE(at + 18);
    const nameLength = buf.readUInt16LE(at + 26);
    const extraLength = buf.readUInt16LE(at + 28);
    const nameStart = at + 30;
    if (nameLength === 0 || nameStart + nameLength > buf.length) {
      pos = at + 4;
      continue;
    }
    const name = buf.toString('utf8', nameStart, nameStart + nameLength);
    // A real entry name is printable; a signature found inside compressed data usually is not.
    if (/^[\x20-\x7e\u00a0-\uffff]+$/.test(name) && !name.includes('\ufffd')) {
      names.push(name);
      const dataStart = nameStart + nameLength + extraLength;
      const sizeKnown = (flags & 0x08) === 0 && compressedSize !== 0xffffffff;
      if (name === '[Content_Types].xml' && sizeKnown && dataStart + compressedSize <= buf.length) {
        contentTypes = readSmallPart(buf.subarray(dataStart, dataStart + compressedSize), method);
      }
      if (sizeKnown && compressedSize > 0 && dataStart + compressedSize <= buf.length) {
        pos = dataStart + compressedSize;
        continue;
      }
    }
    pos = at + 4;
  }
  return { names, contentTypes };
}

function readSmallPart(data: Buffer, method: number): string | null {
  try {
    if (method === 0) return data.toString('utf8');
    if (method === 8) return inflateRawSync(data, { maxOutputLength: 1024 * 1024 }).toString('utf8');
  } catch {
    // A broken or oversized part tells nothing; the caller falls back to the names.
  }
  return null;
}

function detectZip(head: Uint8Array, ext: string, declared: string): Detection {
  const { names, contentTypes } = zipEntryNamesInHead(head);
  const hasName = (prefix: string): boolean => names.some((n) => n === prefix || n.startsWith(prefix));
  if (hasName('word/document') || contentTypes?.includes('wordprocessingml.document.main+xml')) {
    return { mimeType: MIME.docx };
  }
  if (hasName('xl/workbook') || contentTypes?.includes('spreadsheetml.sheet.main+xml')) {
    return { mimeType: MIME.xlsx };
  }
  if (hasName('ppt/') || contentTypes?.includes('presentationml')) {
    return { rejected: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' };
  }
  if (names[0] === 'mimetype') {
    const odf = /application\/vnd\.oasis\.opendocument\.[a-z-.]+/.exec(Buffer.from(head.subarray(0, 200)).toString());
    if (odf) return { rejected: odf[0] };
  }
  // Names that settle it as something else: a plain archive.
  const ooxmlPossible =
    names.length === 0 || names.every((n) => /^(\[Content_Types\]\.xml|_rels\/|docProps\/)/.test(n));
  if (ooxmlPossible) {
    if (ext === 'docx' || declared === MIME.docx) return { mimeType: MIME.docx };
    if (ext === 'xlsx' || declared === MIME.xlsx) return { mimeType: MIME.xlsx };
  }
  return { rejected: 'application/zip' };
}

/**
 * Whether the head looks like delimited rows: at least 3 complete lines, the same number (≥ 2) of
 * comma-, semicolon- or tab-separated fields on each of the first 20 lines.
 */
function looksDelimited(head: Uint8Array): boolean {
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('utf8');
  const lines = text.split(/\r?\n/);
  if (head.length >= SNIFF_HEAD_BYTES) lines.pop(); // the last line may be cut off
  const sample = lines.filter((l) => l.trim() !== '').slice(0, 20);
  if (sample.length < 3) return false;
  for (const delimiter of [',', ';', '\t']) {
    const counts = sample.map((line) => countFields(line, delimiter));
    const firstCount = counts[0] as number;
    if (firstCount >= 2 && counts.every((c) => c === firstCount)) return true;
  }
  return false;
}

/** Fields of one line split on `delimiter` outside double quotes; -1 when a quote is left open. */
function countFields(line: string, delimiter: string): number {
  let fields = 1;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === delimiter && !quoted) fields += 1;
  }
  return quoted ? -1 : fields;
}
