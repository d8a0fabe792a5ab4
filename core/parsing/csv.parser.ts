import { KbError } from '../errors/kb-error.ts';
import { createDocumentBuilder, DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './document-builder.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { decodeText } from './text-decode.ts';

export interface CsvLimits extends OutputLimits {
  /** Most characters in one record (a row, quoted newlines included). */
  readonly maxRecordChars: number;
}

export const DEFAULT_CSV_LIMITS: CsvLimits = { ...DEFAULT_OUTPUT_LIMITS, maxRecordChars: 1024 * 1024 };

/**
 * Splits CSV text into records (RFC 4180: quoted fields may hold delimiters, quotes as `""` and
 * newlines). Calls `onRecord` for each record; throws `content-too-large` as soon as one record
 * grows past `maxRecordChars`, without reading the rest of it.
 */
export function readCsvRecords(
  text: string,
  delimiter: string,
  maxRecordChars: number,
  onRecord: (fields: string[]) => void,
): void {
  const delim = delimiter.charCodeAt(0);
  let fields: string[] = [];
  let recordStart = 0;
  let i = 0;
  const n = text.length;
  const tooLong = (): KbError =>
    new KbError('content-too-large', `A CSV record is longer than the limit of ${maxRecordChars} characters.`);

  while (i < n) {
    // One field starts at i.
    if (text.charCodeAt(i) === 0x22) {
      let value = '';
      let from = i + 1;
      i += 1;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1 || q - recordStart > maxRecordChars) {
          if (q === -1 && n - recordStart <= maxRecordChars) {
            // An unterminated quote runs to the end of the file: keep what is there.
            value += text.slice(from);
            i = n;
            break;
          }
          throw tooLong();
        }
        if (text.charCodeAt(q + 1) === 0x22) {
          value += text.slice(from, q + 1);
          i = q + 2;
          from = i;
          continue;
        }
        value += text.slice(from, q);
        i = q + 1;
        break;
      }
      // Anything between the closing quote and the delimiter is kept as-is.
      const end = nextDelimiterOrNewline(text, i, delim);
      value += text.slice(i, end);
      i = end;
      fields.push(value);
    } else {
      const end = nextDelimiterOrNewline(text, i, delim);
      fields.push(text.slice(i, end));
      i = end;
    }
    if (i - recordStart > maxRecordChars) throw tooLong();
    if (i >= n) break;
    if (text.charCodeAt(i) === delim) {
      i += 1;
      if (i >= n) fields.push('');
      continue;
    }
    // A newline ends the record.
    i += 1;
    onRecord(fields);
    fields = [];
    recordStart = i;
  }
  if (fields.length > 0) onRecord(fields);
}

function nextDelimiterOrNewline(text: string, from: number, delim: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === delim || c === 0x0a) return i;
  }
  return text.length;
}

/** Picks the delimiter (comma, semicolon or tab) most used in the first line outside quotes. */
export function detectDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let quoted = false;
  for (let i = 0; i < text.length && i < 64 * 1024; i++) {
    const c = text[i] as string;
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\n') break;
    else if (!quoted && counts.has(c)) counts.set(c, (counts.get(c) as number) + 1);
  }
  let best = ',';
  for (const [d, count] of counts) if (count > (counts.get(best) as number)) best = d;
  return best;
}

/** Writes fields as one CSV line, quoting fields that hold a comma, quote or newline. */
export function formatCsvLine(fields: readonly string[]): string {
  return fields.map((f) => (/[",\n\r]/.test(f) || f !== f.trim() ? `"${f.replace(/"/g, '""')}"` : f)).join(',');
}

/**
 * CSV, row-aware: the first non-empty record is the header; every later record becomes a `row`
 * block whose `header` is the header line. The header line starts the text (not in a block).
 * Records are written back as comma-separated lines whatever the input delimiter. A record longer
 * than `maxRecordChars` fails with `content-too-large`.
 */
export function parseCsv(bytes: Uint8Array, limits: CsvLimits = DEFAULT_CSV_LIMITS): ParsedDocument {
  const text = decodeText(bytes);
  const builder = createDocumentBuilder(limits);
  const delimiter = detectDelimiter(text);
  let header: string | null = null;
  let rows = 0;
  readCsvRecords(text, delimiter, limits.maxRecordChars, (fields) => {
    if (fields.every((f) => f.trim() === '')) return;
    const line = formatCsvLine(fields);
    if (header === null) {
      header = line;
      builder.raw(line);
      return;
    }
    builder.block('row', line, { header }, '\n');
    rows += 1;
  });
  if (header !== null && rows === 0) {
    // A header-only file still has text worth keeping.
    const only: string = header;
    const single = createDocumentBuilder(limits);
    single.block('paragraph', only);
    return single.build();
  }
  return builder.build();
}
