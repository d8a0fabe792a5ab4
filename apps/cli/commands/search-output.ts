/** How `kb search` shows results in a terminal: ranked passages, wrapped to its width. */
import type { SearchView } from '../../../core/model/response-views.model.ts';

/** Width used when the output is no terminal (a pipe or a file). */
export const DEFAULT_WIDTH = 80;

/**
 * `text` safe to print to a terminal: control characters (escape sequences among them) and
 * bidirectional overrides a document could carry are shown as `\u{…}` instead of acting on the
 * terminal. Line breaks and tabs are kept.
 */
export function printable(text: string): string {
  return text.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`,
  );
}

/**
 * `text` with its runs of whitespace made single spaces, broken into lines of at most `width`
 * characters (code points) at spaces; a word longer than a line is cut.
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let rest = [...word];
    if (line && [...line].length + 1 + rest.length <= width) {
      line += ` ${word}`;
      continue;
    }
    if (line) lines.push(line);
    while (rest.length > width) {
      lines.push(rest.slice(0, width).join(''));
      rest = rest.slice(width);
    }
    line = rest.join('');
  }
  if (line) lines.push(line);
  return lines;
}

/** The score as printed: four decimals. */
function score(value: number): string {
  return value.toFixed(4);
}

/**
 * The answer as text: a heading line per passage (rank, document name, version, page when the
 * format has pages, score) and the passage below it, indented and wrapped to `width`; then how
 * many results, the mode and the time the service took. Empty results say so.
 */
export function renderSearch(answer: SearchView, width: number): string {
  const indent = '   ';
  const inner = Math.max(20, width - indent.length);
  const blocks = answer.results.map((r, i) => {
    const head = [`${i + 1}. ${printable(r.document_name)}`, `v${r.version}`];
    if (r.page !== null) head.push(`page ${r.page}`);
    head.push(`score ${score(r.score)}`);
    const heading = wrap(head.join(' · '), width).join(`\n${indent}`);
    const body = wrap(printable(r.content), inner).map((l) => `${indent}${l}`);
    return [heading, ...body].join('\n');
  });
  const asOf = answer.as_of === null ? '' : `, as of ${answer.as_of}`;
  const count = answer.results.length;
  const summary =
    count === 0
      ? `No results (${answer.mode}${asOf}).`
      : `${count} result${count === 1 ? '' : 's'} (${answer.mode}${asOf}, ${Math.round(answer.took_ms)} ms).`;
  return `${[...blocks, summary].join('\n\n')}\n`;
}
