import { createHash } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';
import type { ParsedDocument, TextBlock } from '../parsing/parsed-document.ts';
import {
  buildLayout,
  jsonPathSegments,
  type Layout,
  LEVEL_HARD,
  LEVEL_UNIT,
  MANDATORY,
  MIN_RATIO,
  sentenceEndsAt,
  WINDOW_RATIO,
} from './chunk-layout.ts';
import { countTokens, isSpace, tokenPieces } from './tokenizer.ts';

export { countTokens };

/** One chunk as the chunker produces it, before it gets an id and a vector. */
export interface ChunkDraft {
  /** 0-based position in the document. */
  index: number;
  /**
   * The text to embed and show: the table header line (row chunks), then the overlap carried from
   * the previous chunk, then the chunk's own text `doc.text.slice(startOffset, endOffset)`.
   */
  content: string;
  /** Tokens of the chunk's own text (no overlap, no repeated header, no separators between blocks). */
  tokens: number;
  /** Start of the chunk's own text in `ParsedDocument.text` (UTF-16 code units, inclusive). */
  startOffset: number;
  /** End of the chunk's own text in `ParsedDocument.text` (exclusive). */
  endOffset: number;
  /** Page of the chunk's first block, or null. */
  page: number | null;
  /**
   * Structure the chunk belongs to: `headings` (heading path, outermost first; always present),
   * `sheet` (section of the rows, XLSX), `path` (common JSON path of the fields), `ocr: true` when
   * any of its text came from OCR.
   */
  metadata: Record<string, unknown>;
  /** SHA-256 (hex) of `content`. */
  contentHash: string;
}

export interface ChunkerOptions {
  /** Most tokens of a chunk's own text; default 512. */
  chunkTokens: number;
  /** Most tokens of the previous chunk's tail repeated at the start of a chunk; default 64. */
  overlapTokens: number;
  /**
   * Most chunks of one document; a document that would need more fails with `content-too-large`
   * once its cut points are known, before any chunk text is built. Default: no limit.
   */
  maxChunks?: number;
}

export const DEFAULT_CHUNKER_OPTIONS: Readonly<ChunkerOptions> = Object.freeze({ chunkTokens: 512, overlapTokens: 64 });

export interface ChunkingResult {
  chunks: ChunkDraft[];
  /** Sum of the chunks' `tokens`: the document's token count without overlap double counting. */
  tokens: number;
}

/**
 * Cuts a parsed document into chunks of at most `chunkTokens` tokens of their own text.
 *
 * Cut points are content-defined. Candidates are the boundaries between blocks and, inside a block
 * too large for one chunk, between sentences (then words, then characters as a last resort). Each
 * candidate is ranked by its structural level, then by a hash of the text right after it. A
 * candidate becomes a cut when it outranks every other candidate closer than `0.35 × chunkTokens`
 * tokens on either side. That depends only on the text near the candidate, never on a running count
 * from the start of the document, so an edit moves only the cuts near it and the chunking
 * re-synchronises right after. Chunks average about 60% of `chunkTokens`. Headings, and changes of
 * page, table or sheet, always cut (consecutive headings stay together with the text after them). A
 * stretch longer than `chunkTokens` between cuts is split at its best-ranked candidate that leaves
 * at least a quarter of `chunkTokens` on both sides, which is again decided by that stretch's own
 * content. A short first or last piece of a section is merged into its neighbour when both fit.
 *
 * A chunk starts with up to `overlapTokens` tokens of the previous chunk's tail, cut at a block,
 * sentence or word start (whole rows for tables), unless a heading, a page, section or table
 * change lies between them. Row chunks start with their table's header line. `tokens` counts only
 * the chunk's own blocks, so the chunks' tokens add up to the document's. Same input, same chunks.
 */
export function chunkDocument(doc: ParsedDocument, options: ChunkerOptions = DEFAULT_CHUNKER_OPTIONS): ChunkingResult {
  const chunkTokens = options.chunkTokens;
  const overlapTokens = options.overlapTokens;
  if (!Number.isInteger(chunkTokens) || chunkTokens < 8) {
    throw new KbError('internal-error', `chunkTokens must be an integer of at least 8, got ${chunkTokens}.`);
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= chunkTokens) {
    throw new KbError(
      'internal-error',
      `overlapTokens must be an integer from 0 to chunkTokens - 1, got ${overlapTokens}.`,
    );
  }

  const layout = buildLayout(doc, chunkTokens);
  const ranges = cutRanges(layout, chunkTokens);
  const maxChunks = options.maxChunks;
  if (maxChunks !== undefined && ranges.length > maxChunks) {
    throw new KbError(
      'content-too-large',
      `The text makes ${ranges.length} chunks of at most ${chunkTokens} tokens; a document may have at most ${maxChunks} chunks.`,
    );
  }
  return buildDrafts(layout, ranges, overlapTokens);
}

// ---------------------------------------------------------------------------------------------
// Cutting: units → chunk ranges [first unit, end unit).

function cutRanges(layout: Layout, chunkTokens: number): Array<[number, number]> {
  const n = layout.unitStart.length;
  const score = layout.unitScore;
  // cum[k] = tokens (own and separators) of units before k; size(a, b) = cum[b] - cum[a] - gap[a].
  const cum = new Float64Array(n + 1);
  for (let k = 0; k < n; k++)
    cum[k + 1] = (cum[k] as number) + (layout.unitGap[k] as number) + (layout.unitTokens[k] as number);
  const size = (a: number, b: number): number =>
    (cum[b] as number) - (cum[a] as number) - (layout.unitGap[a] as number);
  const window = Math.max(1, Math.round(chunkTokens * WINDOW_RATIO));
  const minSize = Math.max(1, Math.round(chunkTokens * MIN_RATIO));
  const minAnchorScore = LEVEL_HARD * LEVEL_UNIT;

  const ranges: Array<[number, number]> = [];
  const emitPiece = (a: number, b: number, out: Array<[number, number]>): void => {
    // Depth-first split of an over-long piece at its best boundary, keeping ranges in order.
    const stack: Array<[number, number]> = [[a, b]];
    while (stack.length > 0) {
      const [x, y] = stack.pop() as [number, number];
      if (y - x <= 1 || size(x, y) <= chunkTokens) {
        out.push([x, y]);
        continue;
      }
      const total = size(x, y);
      let best = -1;
      let bestEligible = false;
      let bestScore = Number.NEGATIVE_INFINITY;
      let bestImbalance = Number.POSITIVE_INFINITY;
      for (let k = x + 1; k < y; k++) {
        const left = size(x, k);
        const right = total - left - (layout.unitGap[k] as number);
        const eligible = left >= minSize && right >= minSize;
        const s = score[k] as number;
        const imbalance = Math.abs(left - right);
        const better =
          best < 0 ||
          (eligible && !bestEligible) ||
          (eligible === bestEligible && (s > bestScore || (s === bestScore && imbalance < bestImbalance)));
        if (better) {
          best = k;
          bestEligible = eligible;
          bestScore = s;
          bestImbalance = imbalance;
        }
      }
      stack.push([best, y], [x, best]);
    }
  };

  let segStart = 0;
  for (let e = 1; e <= n; e++) {
    if (e < n && score[e] !== MANDATORY) continue;
    // Segment [segStart, e) lies between forced cuts. Its anchors are the boundaries that outrank
    // every other boundary of the segment closer than `window` tokens.
    const cuts: number[] = [segStart];
    for (let k = segStart + 1; k < e; k++) {
      const s = score[k] as number;
      if (s < minAnchorScore) continue;
      let anchor = true;
      for (let j = k - 1; j > segStart; j--) {
        if ((cum[k] as number) - (cum[j] as number) >= window) break;
        if ((score[j] as number) >= s) {
          anchor = false;
          break;
        }
      }
      if (!anchor) continue;
      for (let j = k + 1; j < e; j++) {
        if ((cum[j] as number) - (cum[k] as number) >= window) break;
        if ((score[j] as number) >= s) {
          anchor = false;
          break;
        }
      }
      if (anchor) cuts.push(k);
    }
    cuts.push(e);
    const pieces: Array<[number, number]> = [];
    for (let i = 0; i + 1 < cuts.length; i++) emitPiece(cuts[i] as number, cuts[i + 1] as number, pieces);
    // Anchors are at least `window` tokens apart, but the first and last pieces of a segment can be
    // short: fold them into their neighbour when the two fit in one chunk. This runs after over-long
    // pieces were split, so the neighbour is a chunk-sized range: when an edit makes an anchor
    // vanish and its two pieces no longer fit together, the short end piece still folds into what
    // is next to it instead of standing alone (one cut moves, no chunks appear). The decision
    // depends only on the ranges at the segment's ends, so an edit elsewhere cannot change it.
    const first = pieces[0];
    const second = pieces[1];
    if (first && second && size(first[0], first[1]) < minSize && size(first[0], second[1]) <= chunkTokens) {
      pieces.splice(0, 2, [first[0], second[1]]);
    }
    const lastPiece = pieces[pieces.length - 1];
    const beforeLast = pieces[pieces.length - 2];
    if (
      lastPiece &&
      beforeLast &&
      size(lastPiece[0], lastPiece[1]) < minSize &&
      size(beforeLast[0], lastPiece[1]) <= chunkTokens
    ) {
      pieces.splice(pieces.length - 2, 2, [beforeLast[0], lastPiece[1]]);
    }
    for (const piece of pieces) ranges.push(piece);
    segStart = e;
  }
  return ranges;
}

// ---------------------------------------------------------------------------------------------
// Drafts: ranges → content with overlap and header, offsets, metadata, hashes.

function headingText(text: string): string {
  const stripped = text
    .replace(/^#{1,6}[ \t]+/, '')
    .replace(/[ \t]+#+[ \t]*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return stripped.length > 200 ? `${stripped.slice(0, 200)}…` : stripped;
}

function commonJsonPath(paths: string[]): string | undefined {
  if (paths.length === 0) return undefined;
  let prefix = jsonPathSegments(paths[0]);
  for (let i = 1; i < paths.length && prefix.length > 0; i++) {
    const segments = jsonPathSegments(paths[i]);
    let common = 0;
    while (common < prefix.length && common < segments.length && prefix[common] === segments[common]) common += 1;
    prefix = prefix.slice(0, common);
  }
  if (prefix.length === 0) return undefined;
  return prefix.map((segment, i) => (i === 0 || segment.startsWith('[') ? segment : `.${segment}`)).join('');
}

/** Word start at or just after `pos` (skipping one leading whitespace character), or -1. */
function wordStartAt(text: string, pos: number, end: number): number {
  if (pos >= end) return -1;
  const c = text.charCodeAt(pos);
  if (isSpace(c)) {
    return pos + 1 < end && !isSpace(text.charCodeAt(pos + 1)) ? pos + 1 : -1;
  }
  return pos > 0 && isSpace(text.charCodeAt(pos - 1)) ? pos : -1;
}

function skipSpaceForward(text: string, pos: number, end: number): number {
  let p = pos;
  while (p < end && isSpace(text.charCodeAt(p))) p += 1;
  return p;
}

/**
 * Where the overlap taken from the previous chunk (units [a, b)) starts: at most `budget` tokens of
 * its tail, starting at a unit (block or sentence) start, else a sentence start, else a word start
 * inside the last unit that does not fit whole. Returns -1 for no overlap.
 */
function overlapStart(layout: Layout, a: number, b: number, budget: number, wholeUnitsOnly: boolean): number {
  const text = layout.text;
  const tailEnd = layout.unitEnd[b - 1] as number;
  let k = b;
  let used = 0;
  while (k > a) {
    const add = (layout.unitTokens[k - 1] as number) + (k < b ? (layout.unitGap[k] as number) : 0);
    if (used + add > budget) break;
    used += add;
    k -= 1;
  }
  const candidates: number[] = [];
  const unitCandidate = k < b ? skipSpaceForward(text, layout.unitStart[k] as number, tailEnd) : -1;
  if (k > a && !wholeUnitsOnly && used * 2 < budget) {
    // Look inside unit k - 1 for a sentence or word start that keeps the overlap within budget.
    const remaining = budget - used - (k < b ? (layout.unitGap[k] as number) : 0);
    const unitFrom = layout.unitStart[k - 1] as number;
    const unitTo = layout.unitEnd[k - 1] as number;
    if (remaining > 0) {
      const from = Math.max(unitFrom, unitTo - remaining * 12 - 16);
      const pieces = tokenPieces(text.slice(from, unitTo));
      const suffix = new Int32Array(pieces.length + 1);
      for (let i = pieces.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] as number) + (pieces.counts[i] as number);
      const sentences: number[] = [];
      const words: number[] = [];
      for (let i = from > unitFrom ? 1 : 0; i < pieces.length; i++) {
        if ((suffix[i] as number) > remaining) continue;
        const pos = wordStartAt(text, from + (pieces.starts[i] as number), unitTo);
        if (pos < 0) continue;
        if ((used + (suffix[i] as number)) * 2 >= budget && sentenceEndsAt(text, pos, unitFrom)) sentences.push(pos);
        words.push(pos);
      }
      candidates.push(...sentences.slice(0, 4), ...words.slice(0, 4));
    }
  }
  if (unitCandidate >= 0 && unitCandidate < tailEnd) candidates.push(unitCandidate);
  for (const candidate of candidates) {
    if (countTokens(text.slice(candidate, tailEnd)) <= budget) return candidate;
  }
  return -1;
}

function buildDrafts(layout: Layout, ranges: Array<[number, number]>, overlapTokens: number): ChunkingResult {
  const { text, blocks } = layout;
  const chunks: ChunkDraft[] = [];
  const headingStack: Array<{ level: number; text: string }> = [];
  let headingCursor = 0;
  const applyBlock = (b: number): void => {
    const block = blocks[b] as TextBlock;
    if (block.kind !== 'heading') return;
    const level = block.level ?? 1;
    while (headingStack.length > 0 && (headingStack[headingStack.length - 1] as { level: number }).level >= level) {
      headingStack.pop();
    }
    headingStack.push({ level, text: headingText(text.slice(layout.blockStart[b], layout.blockEnd[b])) });
  };

  let total = 0;
  for (let c = 0; c < ranges.length; c++) {
    const [a, b] = ranges[c] as [number, number];
    const firstBlockIndex = layout.unitBlock[a] as number;
    const lastBlockIndex = layout.unitBlock[b - 1] as number;
    const firstBlock = blocks[firstBlockIndex] as TextBlock;

    while (headingCursor < firstBlockIndex) applyBlock(headingCursor++);
    while (headingCursor <= lastBlockIndex && (blocks[headingCursor] as TextBlock).kind === 'heading') {
      applyBlock(headingCursor++);
    }

    let start = layout.unitStart[a] as number;
    let end = layout.unitEnd[b - 1] as number;
    const trimmedStart = skipSpaceForward(text, start, end);
    let trimmedEnd = end;
    while (trimmedEnd > trimmedStart && isSpace(text.charCodeAt(trimmedEnd - 1))) trimmedEnd -= 1;
    if (trimmedStart < trimmedEnd) {
      start = trimmedStart;
      end = trimmedEnd;
    }

    let tokens = 0;
    for (let u = a; u < b; u++) tokens += layout.unitTokens[u] as number;
    total += tokens;

    const isRows = firstBlock.kind === 'row';
    let contentStart = start;
    if (c > 0 && overlapTokens > 0 && layout.unitScore[a] !== MANDATORY) {
      const [pa, pb] = ranges[c - 1] as [number, number];
      const prevBlock = blocks[layout.unitBlock[pb - 1] as number] as TextBlock;
      if (prevBlock.section === firstBlock.section) {
        const from = overlapStart(layout, pa, pb, overlapTokens, isRows);
        if (from >= 0 && from < start) contentStart = from;
      }
    }

    const fieldPaths: string[] = [];
    let ocr = false;
    let firstRow: number | undefined;
    for (let bi = firstBlockIndex; bi <= lastBlockIndex; bi++) {
      const block = blocks[bi] as TextBlock;
      if (block.ocr) ocr = true;
      if (block.kind === 'field' && block.section !== undefined) fieldPaths.push(block.section);
      if (block.kind === 'row' && firstRow === undefined) firstRow = bi;
    }

    // Rows come with their table's header line, unless the chunk's own text already holds it (a
    // sheet-name heading followed by the header line and the first rows).
    const rowBlock = firstRow === undefined ? undefined : (blocks[firstRow] as TextBlock);
    const header = rowBlock?.header?.replace(/[\r\n]+$/, '');
    const headerInText =
      header !== undefined &&
      !isRows &&
      text.slice(start, layout.blockStart[firstRow as number] as number).includes(header);
    const body = text.slice(contentStart, end);
    const content = header !== undefined && header !== '' && !headerInText ? `${header}\n${body}` : body;

    const metadata: Record<string, unknown> = { headings: headingStack.map((h) => h.text) };
    if (rowBlock?.section !== undefined) metadata.sheet = rowBlock.section;
    const path = commonJsonPath(fieldPaths);
    if (path !== undefined) metadata.path = path;
    if (ocr) metadata.ocr = true;

    chunks.push({
      index: c,
      content,
      tokens,
      startOffset: start,
      endOffset: end,
      page: firstBlock.page ?? null,
      metadata,
      contentHash: createHash('sha256').update(content).digest('hex'),
    });
  }
  return { chunks, tokens: total };
}
