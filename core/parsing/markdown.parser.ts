import { createDocumentBuilder, type OutputLimits } from './document-builder.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { decodeText } from './text-decode.ts';

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const INDENTED_CODE = /^(?: {4}|\t)/;

/** Whether a line starts a block that interrupts a paragraph or list item. */
function startsBlock(line: string): boolean {
  return FENCE_OPEN.test(line) || ATX_HEADING.test(line) || THEMATIC_BREAK.test(line) || LIST_ITEM.test(line);
}

/**
 * Markdown, structure-aware: ATX and setext headings become `heading` blocks with their level
 * (markers removed), fenced and indented code becomes `code` blocks (fences removed), each list
 * item (nested ones too) a `list-item` block with its marker, and everything else paragraphs split
 * on blank lines. Thematic breaks are dropped.
 */
export function parseMarkdown(bytes: Uint8Array, limits?: OutputLimits): ParsedDocument {
  const builder = createDocumentBuilder(limits);
  const lines = decodeText(bytes).split('\n');
  let paragraph: string[] = [];
  let lastWasListItem = false;

  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      builder.block('paragraph', paragraph.join('\n'));
      lastWasListItem = false;
    }
    paragraph = [];
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;

    if (line.trim() === '') {
      flushParagraph();
      i += 1;
      continue;
    }

    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) {
      flushParagraph();
      const indent = fence[1]?.length ?? 0;
      const marker = fence[2] as string;
      const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !closing.test(lines[i] as string)) {
        body.push((lines[i] as string).replace(new RegExp(`^ {0,${indent}}`), ''));
        i += 1;
      }
      i += 1; // the closing fence (or past the end)
      builder.block('code', body.join('\n'));
      lastWasListItem = false;
      continue;
    }

    const atx = ATX_HEADING.exec(line);
    if (atx) {
      flushParagraph();
      builder.block('heading', (atx[2] ?? '').trim(), { level: (atx[1] as string).length });
      lastWasListItem = false;
      i += 1;
      continue;
    }

    const setext = SETEXT_UNDERLINE.exec(line);
    if (setext && paragraph.length > 0) {
      const level = setext[1]?.startsWith('=') ? 1 : 2;
      builder.block('heading', paragraph.map((l) => l.trim()).join(' '), { level });
      paragraph = [];
      lastWasListItem = false;
      i += 1;
      continue;
    }

    if (THEMATIC_BREAK.test(line)) {
      flushParagraph();
      i += 1;
      continue;
    }

    const item = LIST_ITEM.exec(line);
    if (item) {
      flushParagraph();
      const parts = [`${item[2]} ${(item[3] ?? '').trim()}`.trimEnd()];
      i += 1;
      // Continuation lines: non-blank lines that do not start another block.
      while (i < lines.length) {
        const next = lines[i] as string;
        if (next.trim() === '' || startsBlock(next)) break;
        parts.push(next.trim());
        i += 1;
      }
      builder.block('list-item', parts.join('\n'), {}, lastWasListItem ? '\n' : '\n\n');
      lastWasListItem = true;
      continue;
    }

    if (paragraph.length === 0 && INDENTED_CODE.test(line) && !lastWasListItem) {
      const body: string[] = [];
      while (i < lines.length) {
        const next = lines[i] as string;
        if (next.trim() !== '' && !INDENTED_CODE.test(next)) break;
        body.push(next.replace(INDENTED_CODE, ''));
        i += 1;
      }
      while (body.length > 0 && (body[body.length - 1] as string).trim() === '') body.pop();
      builder.block('code', body.join('\n'));
      continue;
    }

    // A lazy continuation of the list item above, indented under it after a blank line.
    if (lastWasListItem && paragraph.length === 0 && /^[ \t]{2,}/.test(line)) {
      paragraph.push(line.trim());
      i += 1;
      continue;
    }

    paragraph.push(line);
    lastWasListItem = false;
    i += 1;
  }
  flushParagraph();
  return builder.build();
}
