import { createHash } from 'node:crypto';
import { KbError } from '../errors/kb-error.ts';
import type { ParsedDocument, TextBlock } from '../parsing/parsed-document.ts';
import { countTokens, isSpace, type TokenPieces, tokenPieces } from './tokenizer.ts';

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

// Boundary levels: a cut at a higher level is always preferred. The level sits above a sub-score and
// a 32-bit content hash in one number, so boundaries compare with a single `>`.
const LEVEL_AFTER_HEADING = 0;
const LEVEL_HARD = 1;
const LEVEL_WORD = 2;
const LEVEL_SENTENCE = 3;
const LEVEL_BLOCK = 4;
const LEVEL_SECTION = 5;
const LEVEL_UNIT = 2 ** 46;
const SUB_UNIT = 2 ** 38;
const HASH_UNIT = 2 ** 6;
/** Marks a boundary where a chunk must end (before a heading, between tables or sheets). */
const MANDATORY = Number.POSITIVE_INFINITY;

/** Characters after a boundary that decide its hash (the same number before it only breaks ties). */
const HASH_CONTEXT = 32;
/** A boundary is an anchor when it outranks every boundary closer than this share of `chunkTokens`. */
const WINDOW_RATIO = 0.35;
/** Below this share of `chunkTokens`, a piece is not cut further unless nothing else fits. */
const MIN_RATIO = 0.25;

/** Normalised blocks and the units (whole blocks or fragments of large ones) the chunks are made of. */
interface Layout {
  readonly text: string;
  readonly blocks: TextBlock[];
  readonly blockStart: number[];
  readonly blockEnd: number[];
  readonly unitStart: number[];
  readonly unitEnd: number[];
  readonly unitTokens: number[];
  /** Tokens of the separator text between the previous unit and this one (0 inside a block). */
  readonly unitGap: number[];
  readonly unitBlock: number[];
  /** Score of the boundary before the unit ({@link MANDATORY} for a forced cut). */
  readonly unitScore: number[];
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
// Layout: blocks → units with token counts and ranked boundaries.

/** FNV-1a over `text[from, to)`, continuing from `h`. */
function fnv(text: string, from: number, to: number, h: number): number {
  let x = h;
  for (let i = from; i < to; i++) x = Math.imul(x ^ text.charCodeAt(i), 0x01000193);
  return x;
}

/** murmur3's fmix32: spreads every input bit over the whole 32-bit result. */
function mix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/**
 * Content hash of a boundary, scaled to sit below the level and sub-score: the main part hashes the
 * first {@link HASH_CONTEXT} characters after the boundary only (an edit at the end of the text
 * before a boundary leaves it alone); the text just before the boundary only breaks ties between
 * boundaries whose following text starts the same.
 */
function boundaryHash(text: string, before: number, after: number): number {
  const main = mix(fnv(text, after, Math.min(text.length, after + HASH_CONTEXT), 0x811c9dc5));
  const tie = mix(fnv(text, Math.max(0, before - HASH_CONTEXT), before, 0x01000193)) & (HASH_UNIT - 1);
  return main * HASH_UNIT + tie;
}

function jsonPathSegments(path: string | undefined): string[] {
  return path?.match(/\[[^\]]*\]|[^.[\]]+/g) ?? [];
}

/** Sub-score of a boundary between two JSON fields: cutting where the paths part early ranks higher. */
function jsonBoundarySub(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  const sa = jsonPathSegments(a);
  const sb = jsonPathSegments(b);
  let common = 0;
  while (common < sa.length && common < sb.length && sa[common] === sb[common]) common += 1;
  return Math.max(1, 255 - common);
}

/** Level and sub-score of the boundary between two consecutive blocks, or {@link MANDATORY}. */
function blockBoundaryRank(a: TextBlock, b: TextBlock): number {
  // A chunk lies on one page, so its `page` tells where every word of it is.
  if ((a.page ?? null) !== (b.page ?? null)) return MANDATORY;
  const aRow = a.kind === 'row';
  const bRow = b.kind === 'row';
  if (aRow || bRow) {
    const sameTable = aRow && bRow && a.section === b.section && a.header === b.header;
    // A heading right before a table (a sheet name) stays with its first rows.
    if (!sameTable && !(bRow && a.kind === 'heading')) return MANDATORY;
  }
  if (b.kind === 'heading' && a.kind !== 'heading') return MANDATORY;
  if (a.kind === 'heading') return LEVEL_AFTER_HEADING * LEVEL_UNIT;
  if (a.kind === 'field' && b.kind === 'field')
    return LEVEL_BLOCK * LEVEL_UNIT + jsonBoundarySub(a.section, b.section) * SUB_UNIT;
  if (a.section !== b.section) return LEVEL_SECTION * LEVEL_UNIT;
  return LEVEL_BLOCK * LEVEL_UNIT;
}

function normaliseBlocks(doc: ParsedDocument): { blocks: TextBlock[]; starts: number[]; ends: number[] } {
  const text = doc.text;
  const source: readonly TextBlock[] =
    doc.blocks.length > 0 || text.trim() === ''
      ? doc.blocks
      : [{ kind: 'paragraph', start: 0, end: text.length, page: null }];
  const blocks: TextBlock[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let floor = 0;
  for (const block of source) {
    let start = Math.max(floor, Math.min(text.length, Math.trunc(block.start)));
    let end = Math.max(start, Math.min(text.length, Math.trunc(block.end)));
    while (start < end && isSpace(text.charCodeAt(start))) start += 1;
    while (end > start && isSpace(text.charCodeAt(end - 1))) end -= 1;
    if (start === end) continue;
    blocks.push(block);
    starts.push(start);
    ends.push(end);
    floor = end;
  }
  return { blocks, starts, ends };
}

function buildLayout(doc: ParsedDocument, chunkTokens: number): Layout {
  const text = doc.text;
  const { blocks, starts, ends } = normaliseBlocks(doc);
  const layout: Layout = {
    text,
    blocks,
    blockStart: starts,
    blockEnd: ends,
    unitStart: [],
    unitEnd: [],
    unitTokens: [],
    unitGap: [],
    unitBlock: [],
    unitScore: [],
  };
  // Separators between blocks are short and repetitive ("\n\n", "\n"); count each distinct one once.
  const gapTokens = new Map<string, number>();
  const countGap = (gap: string): number => {
    if (gap.length === 0) return 0;
    if (gap.length > 32) return countTokens(gap);
    let n = gapTokens.get(gap);
    if (n === undefined) {
      n = countTokens(gap);
      gapTokens.set(gap, n);
    }
    return n;
  };

  for (let b = 0; b < blocks.length; b++) {
    const block = blocks[b] as TextBlock;
    const start = starts[b] as number;
    const end = ends[b] as number;
    const firstRank = b === 0 ? MANDATORY : blockBoundaryRank(blocks[b - 1] as TextBlock, block);
    const gap = b === 0 ? 0 : countGap(text.slice(ends[b - 1] as number, start));
    const blockText = text.slice(start, end);
    // A block long enough to be split anyway is tokenised once, into pieces; others are just counted.
    const pieces = blockText.length > chunkTokens * 4 ? tokenPieces(blockText) : undefined;
    const tokens = pieces === undefined ? countTokens(blockText) : sumCounts(pieces, 0, pieces.length);
    if (tokens <= chunkTokens) {
      pushUnit(layout, start, end, tokens, b, firstRank, gap, b === 0 ? start : (ends[b - 1] as number));
    } else {
      splitLargeBlock(layout, b, start, end, chunkTokens, firstRank, gap, pieces ?? tokenPieces(blockText));
    }
  }
  return layout;
}

/**
 * Appends a unit. `before` is where the text before the boundary ends: the previous unit's end (the
 * same as `start` inside a block), so the boundary hash sees the text on both sides of the cut.
 */
function pushUnit(
  layout: Layout,
  start: number,
  end: number,
  tokens: number,
  block: number,
  rank: number,
  gap: number,
  before: number,
): void {
  const score = rank === MANDATORY ? MANDATORY : rank + boundaryHash(layout.text, before, start);
  layout.unitStart.push(start);
  layout.unitEnd.push(end);
  layout.unitTokens.push(tokens);
  layout.unitGap.push(gap);
  layout.unitBlock.push(block);
  layout.unitScore.push(score);
}

function sumCounts(pieces: TokenPieces, from: number, to: number): number {
  let total = 0;
  for (let i = from; i < to; i++) total += pieces.counts[i] as number;
  return total;
}

const SENTENCE_END = new Set([0x2e, 0x21, 0x3f, 0x2026, 0x203d]); // . ! ? … ‽
const FULL_WIDTH_END = new Set([0x3002, 0xff01, 0xff1f, 0xff0e]); // 。 ！ ？ ．
const CLOSERS = new Set([0x22, 0x27, 0x29, 0x5d, 0x7d, 0x201d, 0x2019, 0xbb, 0x300d, 0x300f]); // " ' ) ] } ” ’ » 」 』

/**
 * Whether a sentence ends at `pos` (exclusive) in `text`, looking back no further than `floor`:
 * a line break, or terminal punctuation (then closing quotes/brackets) followed by whitespace.
 */
function sentenceEndsAt(text: string, pos: number, floor: number): boolean {
  let i = pos - 1;
  let sawNewline = false;
  while (i >= floor && isSpace(text.charCodeAt(i))) {
    if (text.charCodeAt(i) === 10) sawNewline = true;
    i -= 1;
  }
  if (sawNewline) return true;
  if (i < floor) return false;
  const spaced = i < pos - 1 || pos >= text.length || isSpace(text.charCodeAt(pos));
  while (i >= floor && CLOSERS.has(text.charCodeAt(i))) i -= 1;
  if (i < floor) return false;
  const code = text.charCodeAt(i);
  if (FULL_WIDTH_END.has(code)) return true;
  return spaced && SENTENCE_END.has(code);
}

/**
 * Splits a block larger than `chunkTokens` into contiguous units: sentences (and lines); a sentence
 * still too large into words; a word still too large into tokenizer pieces; a piece still too large
 * into runs of characters. Token counts come from one tokenizer pass over the block, so the units'
 * counts add up to the block's count (except for pieces cut into characters).
 */
function splitLargeBlock(
  layout: Layout,
  block: number,
  start: number,
  end: number,
  chunkTokens: number,
  firstRank: number,
  gap: number,
  pieces: TokenPieces,
): void {
  const text = layout.text;
  const pieceStart = (i: number): number => start + (i < pieces.length ? (pieces.starts[i] as number) : end - start);
  let first = true;
  const emit = (s: number, e: number, tokens: number, level: number, sub: number): void => {
    if (first) {
      const n = layout.unitEnd.length;
      pushUnit(layout, s, e, tokens, block, firstRank, gap, n === 0 ? s : (layout.unitEnd[n - 1] as number));
      first = false;
    } else {
      pushUnit(layout, s, e, tokens, block, level * LEVEL_UNIT + sub * SUB_UNIT, 0, s);
    }
  };
  const sum = (from: number, to: number): number => sumCounts(pieces, from, to);

  const emitHard = (i: number, level: number): void => {
    const s = pieceStart(i);
    const e = pieceStart(i + 1);
    const tokens = pieces.counts[i] as number;
    if (tokens <= chunkTokens) {
      emit(s, e, tokens, level, 0);
      return;
    }
    // One tokenizer piece over the limit (e.g. a very long run of letters): cut every chunkTokens / 3
    // code units, since a code unit never takes more than three tokens; keep surrogate pairs whole.
    const step = Math.max(1, Math.floor(chunkTokens / 3));
    let pos = s;
    let lvl = level;
    while (pos < e) {
      let stop = Math.min(e, pos + step);
      const last = text.charCodeAt(stop - 1);
      if (stop < e && stop - 1 > pos && last >= 0xd800 && last <= 0xdbff) stop -= 1;
      emit(pos, stop, countTokens(text.slice(pos, stop)), lvl, 0);
      lvl = LEVEL_HARD;
      pos = stop;
    }
  };

  const emitWords = (from: number, to: number, level: number, sub: number): void => {
    let wordFrom = from;
    let lvl = level;
    let lvlSub = sub;
    const flush = (wordTo: number): void => {
      const tokens = sum(wordFrom, wordTo);
      if (tokens <= chunkTokens) {
        emit(pieceStart(wordFrom), pieceStart(wordTo), tokens, lvl, lvlSub);
      } else {
        for (let i = wordFrom; i < wordTo; i++) emitHard(i, i === wordFrom ? lvl : LEVEL_HARD);
      }
      lvl = LEVEL_WORD;
      lvlSub = 0;
    };
    for (let i = from + 1; i < to; i++) {
      const s = pieceStart(i);
      const c = text.charCodeAt(s);
      const startsWord = isSpace(c)
        ? !isSpace(text.charCodeAt(s + 1)) && s + 1 < pieceStart(i + 1)
        : isSpace(text.charCodeAt(s - 1));
      if (startsWord) {
        flush(i);
        wordFrom = i;
      }
    }
    flush(to);
  };

  let sentenceFrom = 0;
  let level = LEVEL_SENTENCE;
  let sub = 0;
  for (let i = 0; i < pieces.length; i++) {
    const boundary = pieceStart(i + 1);
    const isLast = i === pieces.length - 1;
    if (!isLast && !sentenceEndsAt(text, boundary, pieceStart(sentenceFrom))) continue;
    const tokens = sum(sentenceFrom, i + 1);
    if (tokens <= chunkTokens) {
      emit(pieceStart(sentenceFrom), boundary, tokens, level, sub);
    } else {
      emitWords(sentenceFrom, i + 1, level, sub);
    }
    // Line breaks rank above sentence ends inside a block.
    level = LEVEL_SENTENCE;
    sub = text.charCodeAt(boundary - 1) === 10 || text.slice(pieceStart(i), boundary).includes('\n') ? 1 : 0;
    sentenceFrom = i + 1;
  }
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
