/**
 * The chunker's layout: a parsed document's blocks normalised into one text, cut into units
 * (whole blocks, or sentences, words and characters of blocks too large for one chunk) with their
 * token counts and the ranked boundaries between them. `chunker.ts` cuts and renders chunks from it.
 */
import type { ParsedDocument, TextBlock } from '../parsing/parsed-document.ts';
import { countTokens, isSpace, type TokenPieces, tokenPieces } from './tokenizer.ts';

// Boundary levels: a cut at a higher level is always preferred. The level sits above a sub-score and
// a 32-bit content hash in one number, so boundaries compare with a single `>`.
const LEVEL_AFTER_HEADING = 0;
export const LEVEL_HARD = 1;
const LEVEL_WORD = 2;
const LEVEL_SENTENCE = 3;
const LEVEL_BLOCK = 4;
const LEVEL_SECTION = 5;
export const LEVEL_UNIT = 2 ** 46;
const SUB_UNIT = 2 ** 38;
const HASH_UNIT = 2 ** 6;
/** Marks a boundary where a chunk must end (before a heading, between tables or sheets). */
export const MANDATORY = Number.POSITIVE_INFINITY;

/** Characters after a boundary that decide its hash (the same number before it only breaks ties). */
const HASH_CONTEXT = 32;
/** A boundary is an anchor when it outranks every boundary closer than this share of `chunkTokens`. */
export const WINDOW_RATIO = 0.35;
/** Below this share of `chunkTokens`, a piece is not cut further unless nothing else fits. */
export const MIN_RATIO = 0.25;

/** Normalised blocks and the units (whole blocks or fragments of large ones) the chunks are made of. */
export interface Layout {
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

export function jsonPathSegments(path: string | undefined): string[] {
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

export function buildLayout(doc: ParsedDocument, chunkTokens: number): Layout {
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
export function sentenceEndsAt(text: string, pos: number, floor: number): boolean {
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
