import mammoth from 'mammoth';
import { KbError } from '../errors/kb-error.ts';
import { formatCsvLine } from './csv.parser.ts';
import {
  createDocumentBuilder,
  DEFAULT_OUTPUT_LIMITS,
  type DocumentBuilder,
  type OutputLimits,
} from './document-builder.ts';
import { guardOoxml, requirePart } from './ooxml.ts';
import type { ParsedDocument } from './parsed-document.ts';
import type { ZipGuardLimits } from './zip-guard.ts';

export interface DocxOptions {
  readonly limits?: OutputLimits;
  readonly zipLimits?: Partial<ZipGuardLimits>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[body.toLowerCase()] ?? whole;
  });
}

const TOKEN = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(\/?)>|([^<]+)/g;

/**
 * Turns mammoth's HTML into blocks: `h1`–`h6` headings, `p` paragraphs, `li` list items (nested
 * lists give one block per item), table rows as `row` blocks with the first row as `header`.
 */
export function htmlToBlocks(html: string, builder: DocumentBuilder): void {
  let text = '';
  /** Open lists, innermost last, with the number of items seen in each. */
  const listDepth: { ordered: boolean; items: number }[] = [];
  let itemMarker = '';
  let inCell = false;
  let cellText = '';
  let cells: string[] = [];
  let tableRows = 0;
  let tableHeader: string | null = null;
  let lastWasItem = false;

  const emit = (kind: 'paragraph' | 'heading' | 'list-item', value: string, level?: number): void => {
    const clean = value.replace(/[ \t]+\n/g, '\n').trim();
    if (clean === '') return;
    const sep = kind === 'list-item' && lastWasItem ? '\n' : '\n\n';
    builder.block(
      kind,
      kind === 'list-item' ? `${itemMarker}${clean}` : clean,
      level === undefined ? {} : { level },
      sep,
    );
    lastWasItem = kind === 'list-item';
  };

  for (const match of html.matchAll(TOKEN)) {
    const [, closing, rawTag, , content] = match;
    if (content !== undefined) {
      const decoded = decodeEntities(content);
      if (inCell) cellText += decoded;
      else text += decoded;
      continue;
    }
    const tag = (rawTag as string).toLowerCase();
    const open = closing !== '/';
    switch (tag) {
      case 'br':
        if (inCell) cellText += ' ';
        else text += '\n';
        break;
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        if (inCell) break;
        if (open) {
          if (listDepth.length === 0) text = '';
        } else {
          emit('heading', text, Number(tag[1]));
          text = '';
        }
        break;
      case 'p':
        if (inCell) {
          if (!open) cellText += ' ';
        } else if (listDepth.length > 0) {
          if (!open) text += '\n';
        } else if (!open) {
          emit('paragraph', text);
          text = '';
        } else {
          text = '';
        }
        break;
      case 'ul':
      case 'ol':
        if (inCell) break;
        if (open) {
          // The text of an item that holds a nested list ends where the nested list starts.
          if (listDepth.length > 0) emit('list-item', text);
          text = '';
          listDepth.push({ ordered: tag === 'ol', items: 0 });
        } else {
          listDepth.pop();
        }
        break;
      case 'li': {
        if (inCell) break;
        const list = listDepth[listDepth.length - 1];
        if (open && list) {
          list.items += 1;
          itemMarker = list.ordered ? `${list.items}. ` : '- ';
        } else if (!open) {
          if (list) itemMarker = list.ordered ? `${list.items}. ` : '- ';
          emit('list-item', text);
        }
        text = '';
        break;
      }
      case 'table':
        if (open) {
          tableRows = 0;
          tableHeader = null;
        }
        break;
      case 'tr':
        if (open) cells = [];
        else if (cells.some((c) => c !== '')) {
          const line = formatCsvLine(cells);
          if (tableRows === 0) {
            tableHeader = line;
            builder.raw(line);
            lastWasItem = false;
          } else {
            builder.block('row', line, tableHeader === null ? {} : { header: tableHeader }, '\n');
          }
          tableRows += 1;
        }
        break;
      case 'td':
      case 'th':
        if (open) {
          inCell = true;
          cellText = '';
        } else {
          inCell = false;
          cells.push(cellText.replace(/\s+/g, ' ').trim());
        }
        break;
      default:
        break;
    }
  }
  if (text.trim() !== '') emit('paragraph', text);
}

/**
 * DOCX with mammoth, after the zip guard: headings (from Word's heading styles), paragraphs, list
 * items and table rows become blocks. Images are dropped without being decoded.
 */
export async function parseDocx(bytes: Uint8Array, options: DocxOptions = {}): Promise<ParsedDocument> {
  const report = await guardOoxml(bytes, 'DOCX', { limits: options.zipLimits ?? {} });
  requirePart(report, 'word/document.xml', 'DOCX');
  let html: string;
  let messages: { type: string; message: string }[];
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
        ignoreEmptyParagraphs: true,
        externalFileAccess: false,
      },
    );
    html = result.value;
    messages = result.messages;
  } catch (error) {
    if (error instanceof KbError) throw error;
    throw new KbError('corrupt-file', `The DOCX could not be read: ${(error as Error).message}`);
  }
  const builder = createDocumentBuilder(options.limits ?? DEFAULT_OUTPUT_LIMITS);
  for (const m of messages.slice(0, 20)) if (m.type === 'error') builder.warn(m.message);
  htmlToBlocks(html, builder);
  return builder.build();
}
