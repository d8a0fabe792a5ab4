import * as XLSX from 'xlsx';
import { KbError } from '../errors/kb-error.ts';
import { formatCsvLine } from './csv.parser.ts';
import { createDocumentBuilder, DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './document-builder.ts';
import { guardOoxml, requirePart } from './ooxml.ts';
import { DEFAULT_MAX_SHARED_STRINGS, DEFAULT_MAX_SHEET_ROWS } from './parse-limits.ts';
import type { ParsedDocument } from './parsed-document.ts';
import type { ZipEntryInfo, ZipGuardLimits } from './zip-guard.ts';

export interface XlsxOptions {
  readonly limits?: OutputLimits;
  readonly zipLimits?: Partial<ZipGuardLimits>;
  /** Most rows over all worksheets. */
  readonly maxRows?: number;
  /** Most entries of the shared-string table. */
  readonly maxSharedStrings?: number;
}

const ROW_TAG = /<(?:[A-Za-z0-9_]+:)?row[\s>/]/g;
const SHARED_STRING_TAG = /<(?:[A-Za-z0-9_]+:)?si[\s>/]/g;

/** Counts matches of `tag` in a part as it inflates; calls `over` with the count after each piece. */
function tagCounter(tag: RegExp, over: (count: number) => void): (chunk: Buffer) => void {
  let tail = '';
  let count = 0;
  return (chunk) => {
    const window = tail + chunk.toString('latin1');
    tag.lastIndex = 0;
    let cut = 0;
    for (let m = tag.exec(window); m !== null; m = tag.exec(window)) {
      count += 1;
      cut = m.index + m[0].length;
    }
    over(count);
    // Keep enough of the end to catch a tag split across chunks, but never a counted one.
    tail = window.slice(Math.max(cut, window.length - 24));
  };
}

/**
 * Counts `<row` elements in the worksheet parts and `<si` entries of the shared-string table as
 * they inflate, throwing `content-too-large` once the workbook passes `maxRows` rows or
 * `maxSharedStrings` strings, so a huge sheet or string table fails while the zip guard is still
 * reading it.
 */
function createSizeGuard(
  maxRows: number,
  maxSharedStrings: number,
): (entry: ZipEntryInfo) => ((chunk: Buffer) => void) | undefined {
  let rows = 0;
  return (entry) => {
    if (/^xl\/sharedStrings\.xml$/i.test(entry.name)) {
      return tagCounter(SHARED_STRING_TAG, (count) => {
        if (count > maxSharedStrings) {
          throw new KbError(
            'content-too-large',
            `The workbook's shared-string table has more than ${maxSharedStrings} strings; the limit is ${maxSharedStrings}.`,
          );
        }
      });
    }
    if (!/^xl\/worksheets\/[^/]+\.xml$/i.test(entry.name)) return undefined;
    const base = rows;
    return tagCounter(ROW_TAG, (count) => {
      rows = base + count;
      if (rows > maxRows) {
        throw new KbError('content-too-large', `The workbook has more than ${maxRows} rows; the limit is ${maxRows}.`);
      }
    });
  };
}

function rowsOf(sheet: XLSX.WorkSheet): string[][] {
  const rows = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: false, defval: '', blankrows: false });
  return rows.map((row) => {
    const cells = row.map((v) => (v === null || v === undefined ? '' : String(v).replace(/\s+/g, ' ').trim()));
    while (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
    return cells;
  });
}

/**
 * XLSX with SheetJS, after the zip guard: one table per sheet. The sheet name starts a level-1
 * `heading`; its first non-empty row is the header line; every later row is a `row` block with
 * `header` set and `section` = sheet name. The row count is checked while the guard inflates the
 * worksheet parts and again through `sheetRows`, so a sheet with a million rows fails with
 * `content-too-large` without being materialised.
 */
export async function parseXlsx(bytes: Uint8Array, options: XlsxOptions = {}): Promise<ParsedDocument> {
  const maxRows = options.maxRows ?? DEFAULT_MAX_SHEET_ROWS;
  const report = await guardOoxml(bytes, 'XLSX', {
    limits: options.zipLimits ?? {},
    inspect: createSizeGuard(maxRows, options.maxSharedStrings ?? DEFAULT_MAX_SHARED_STRINGS),
  });
  requirePart(report, 'xl/workbook.xml', 'XLSX');

  let workbook: XLSX.WorkBook;
  try {
    workbook = XLSX.read(bytes, {
      type: 'array',
      dense: true,
      sheetRows: maxRows + 1,
      cellFormula: false,
      cellHTML: false,
      cellStyles: false,
      bookVBA: false,
      bookDeps: false,
      WTF: false,
    });
  } catch (error) {
    throw new KbError('corrupt-file', `The XLSX could not be read: ${(error as Error).message}`);
  }

  const builder = createDocumentBuilder(options.limits ?? DEFAULT_OUTPUT_LIMITS);
  let total = 0;
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    const fullRef = (sheet['!fullref'] as string | undefined) ?? sheet['!ref'];
    if (fullRef) {
      const range = XLSX.utils.decode_range(fullRef);
      if (range.e.r - range.s.r + 1 > maxRows) {
        throw new KbError('content-too-large', `Sheet "${name}" has more than ${maxRows} rows.`);
      }
    }
    const rows = rowsOf(sheet).filter((r) => r.length > 0);
    if (rows.length === 0) continue;
    total += rows.length;
    if (total > maxRows) throw new KbError('content-too-large', `The workbook has more than ${maxRows} rows.`);
    builder.block('heading', name, { level: 1, section: name });
    const header = formatCsvLine(rows[0] as string[]);
    if (rows.length === 1) {
      builder.block('paragraph', header, { section: name });
      continue;
    }
    builder.raw(header);
    for (let i = 1; i < rows.length; i++) {
      builder.block('row', formatCsvLine(rows[i] as string[]), { header, section: name }, '\n');
    }
  }
  return builder.build();
}
