import { countTokens as countEncoded, decode, encodeGenerator } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * Token counting for the chunker: the `cl100k_base` byte-pair encoding (the encoding of OpenAI's
 * embedding models), pure JavaScript, bundled with the package, so nothing is fetched at run time.
 * The tokenizer's own merge cache is bounded; this module keeps no other state.
 */
export const TOKEN_ENCODING = 'cl100k_base';

/** Special-token markers such as `<|endoftext|>` inside a document are plain text, never an error. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Byte-pair merging is quadratic in the length of one pre-token, and a pre-token is a whole run of
 * letters, punctuation or whitespace: a 100 kB DNA sequence or a line of 50,000 dashes would take
 * minutes. Runs longer than this are therefore cut into pieces of this many code units first (which
 * can only change their count by a token or so per piece).
 */
const MAX_RUN = 128;

const LETTER = /[\p{L}\p{M}]/u;
const NUMBER = /\p{N}/u;
const CLASS_LETTER = 1;
const CLASS_NUMBER = 2;
const CLASS_SPACE = 3;
const CLASS_OTHER = 4;
/** Character class of each UTF-16 code unit below U+10000, filled on first use (0: not yet known). */
const bmpClass = new Uint8Array(0x10000);

/** Whether a UTF-16 code unit is white space (Unicode `White_Space`, plus the BOM; not U+0085). */
export function isSpace(code: number): boolean {
  return (
    code === 32 ||
    (code >= 9 && code <= 13) ||
    (code >= 0xa0 &&
      (code === 0xa0 ||
        code === 0x1680 ||
        (code >= 0x2000 && code <= 0x200a) ||
        code === 0x2028 ||
        code === 0x2029 ||
        code === 0x202f ||
        code === 0x205f ||
        code === 0x3000 ||
        code === 0xfeff))
  );
}

function classify(char: string, code: number): number {
  if (isSpace(code)) return CLASS_SPACE;
  if (LETTER.test(char)) return CLASS_LETTER;
  if (NUMBER.test(char)) return CLASS_NUMBER;
  return CLASS_OTHER;
}

/** Class of the character at `i` and its length in code units (2 for a surrogate pair). */
function classAt(text: string, i: number): [number, number] {
  const code = text.charCodeAt(i);
  if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return [classify(text.slice(i, i + 2), 0x10000), 2];
  }
  let known = bmpClass[code] as number;
  if (known === 0) {
    known = classify(String.fromCharCode(code), code);
    bmpClass[code] = known;
  }
  return [known, 1];
}

/**
 * Cheap linear pre-check: every run of more than {@link MAX_RUN} letters, symbols or spaces lies
 * inside a run of more than {@link MAX_RUN} characters that are all non-space or all space.
 */
function mayHoldLongRun(text: string): boolean {
  let run = 0;
  let spaceRun = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (space === spaceRun) {
      run += 1;
      if (run > MAX_RUN) return true;
    } else {
      spaceRun = space;
      run = 1;
    }
  }
  return false;
}

/**
 * Calls `visit` with consecutive slices of `text` that together make up all of it, none holding a
 * run of more than {@link MAX_RUN} code units of letters (with marks), of symbols (neither space,
 * letter nor digit) or of spaces; surrogate pairs are never cut. One pass with no regular
 * expression over the whole text, so the time is linear and the stack depth constant whatever
 * the input (a backtracking regex over a 50 MB run overflows the stack).
 */
function forEachSafeSlice(text: string, visit: (slice: string, offset: number) => void): void {
  if (text.length <= MAX_RUN || !mayHoldLongRun(text)) {
    visit(text, 0);
    return;
  }
  let last = 0; // start of the text not yet visited
  let runStart = 0;
  let runClass = 0;
  let i = 0;
  const cutRun = (runEnd: number): void => {
    if (runClass === CLASS_NUMBER || runEnd - runStart <= MAX_RUN) return;
    if (runStart > last) visit(text.slice(last, runStart), last);
    let pos = runStart;
    while (pos < runEnd) {
      let stop = Math.min(runEnd, pos + MAX_RUN);
      const code = text.charCodeAt(stop - 1);
      if (stop < runEnd && code >= 0xd800 && code <= 0xdbff) stop -= 1;
      visit(text.slice(pos, stop), pos);
      pos = stop;
    }
    last = runEnd;
  };
  while (i < text.length) {
    const [cls, width] = classAt(text, i);
    if (cls !== runClass) {
      cutRun(i);
      runStart = i;
      runClass = cls;
    }
    i += width;
  }
  cutRun(text.length);
  if (last < text.length) visit(text.slice(last), last);
}

/**
 * Number of `cl100k_base` tokens in `text`. Special-token markers count as ordinary text. Runs of
 * more than 128 letters, symbols or spaces are counted in 128-character pieces, which keeps the
 * count linear in the text's length.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let total = 0;
  forEachSafeSlice(text, (slice) => {
    total += countEncoded(slice, PLAIN_TEXT);
  });
  return total;
}

/**
 * The text cut into the tokenizer's own pre-token pieces (the regex split that precedes byte-pair
 * merging), with each piece's token count. Summing `counts` over a run of pieces gives the exact
 * token count of that run as part of the whole text, so a long text can be cut at piece
 * boundaries after one pass of the tokenizer.
 */
export interface TokenPieces {
  /** Start offset of each piece in the text (UTF-16 code units); `starts[i + 1]` ends piece `i`. */
  readonly starts: Int32Array;
  /** Tokens of each piece. */
  readonly counts: Int32Array;
  /** Number of pieces. */
  readonly length: number;
}

/**
 * Splits `text` into pre-token pieces with their token counts (one tokenizer pass). Returns a
 * single piece for the whole text if the decoded pieces ever fail to line up with the input,
 * which keeps callers correct (they then cut coarser) even if the tokenizer changes.
 */
export function tokenPieces(text: string): TokenPieces {
  let starts = new Int32Array(Math.max(16, Math.ceil(text.length / 3)));
  let counts = new Int32Array(starts.length);
  let n = 0;
  let aligned = true;
  forEachSafeSlice(text, (slice, sliceOffset) => {
    let offset = sliceOffset;
    for (const group of encodeGenerator(slice, PLAIN_TEXT)) {
      if (n === starts.length) {
        const grownStarts = new Int32Array(starts.length * 2);
        grownStarts.set(starts);
        starts = grownStarts;
        const grownCounts = new Int32Array(counts.length * 2);
        grownCounts.set(counts);
        counts = grownCounts;
      }
      starts[n] = offset;
      counts[n] = group.length;
      n += 1;
      offset += decode(group).length;
    }
    if (offset !== sliceOffset + slice.length) aligned = false;
  });
  if (!aligned) {
    return { starts: Int32Array.of(0), counts: Int32Array.of(countTokens(text)), length: text.length === 0 ? 0 : 1 };
  }
  return { starts: starts.subarray(0, n), counts: counts.subarray(0, n), length: n };
}
