/**
 * The syntax of glob patterns (see `glob-pattern.ts`): a pattern read into items — characters,
 * wildcards, bracket expressions and groups — in one pass, without backtracking: the openings and
 * closings of groups are paired first, and whatever stays unpaired is plain text.
 */

/** Groups nested deeper than this are refused by {@link globPatternProblem} (and read as plain text). */
export const MAX_NESTING = 16;

/** Whether a bracket expression takes a character (a UTF-16 code unit). */
export type Test = (code: number) => boolean;

/** One piece of a pattern; `stars` is a run of `*` (`**` may be a globstar, by its neighbours). */
export type Item =
  | { readonly t: 'lit'; readonly code: number }
  | { readonly t: 'any' }
  | { readonly t: 'stars'; readonly n: number }
  | { readonly t: 'class'; readonly test: Test }
  | { readonly t: 'group'; readonly mode: GroupMode; readonly alts: Item[][] };

export type GroupMode = '{' | '@' | '?' | '+' | '*' | '!';

type Token =
  | { k: 'item'; item: Item }
  | { k: 'open'; mode: GroupMode; text: string }
  | { k: 'sep'; code: number }
  | { k: 'close'; code: number };

const POSIX: Record<string, Array<[number, number]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

/** A bracket expression starting at `start` (`[`): its test and where it ends, or null if it is plain text. */
function readClass(p: string, start: number): { test: Test; end: number } | null {
  let i = start + 1;
  let negate = false;
  if (p[i] === '!' || p[i] === '^') {
    negate = true;
    i += 1;
  }
  const ranges: Array<[number, number]> = [];
  let first = true;
  while (i < p.length) {
    const c = p[i];
    if (c === ']' && !first) {
      const test: Test = (code) => ranges.some(([lo, hi]) => code >= lo && code <= hi) !== negate;
      return { test: (code) => code !== 0x2f && test(code), end: i + 1 };
    }
    first = false;
    if (c === '[' && p[i + 1] === ':') {
      const close = p.indexOf(':]', i + 2);
      const named = close > 0 ? POSIX[p.slice(i + 2, close)] : undefined;
      if (named) {
        ranges.push(...named);
        i = close + 2;
        continue;
      }
    }
    let lo = p.charCodeAt(i);
    if (c === '\\' && i + 1 < p.length) lo = p.charCodeAt(++i);
    i += 1;
    if (p[i] === '-' && i + 1 < p.length && p[i + 1] !== ']') {
      let at = i + 1;
      if (p[at] === '\\' && at + 1 < p.length) at += 1;
      const hi = p.charCodeAt(at);
      i = at + 1;
      if (hi < lo) return null;
      ranges.push([lo, hi]);
    } else ranges.push([lo, lo]);
  }
  return null;
}

function tokenize(p: string): Token[] {
  const tokens: Token[] = [];
  const lit = (code: number) => tokens.push({ k: 'item', item: { t: 'lit', code } });
  for (let i = 0; i < p.length; ) {
    const c = p[i] as string;
    const next = p[i + 1];
    if (c === '\\') {
      lit(p.charCodeAt(i + 1 < p.length ? i + 1 : i));
      i += i + 1 < p.length ? 2 : 1;
    } else if (next === '(' && (c === '@' || c === '?' || c === '+' || c === '*' || c === '!')) {
      tokens.push({ k: 'open', mode: c, text: `${c}(` });
      i += 2;
    } else if (c === '*') {
      let n = 1;
      while (p[i + n] === '*' && p[i + n + 1] !== '(') n += 1;
      // `***` is a `*`, as `**` is a globstar only as a whole segment.
      tokens.push({ k: 'item', item: { t: 'stars', n } });
      i += n;
    } else if (c === '?') {
      tokens.push({ k: 'item', item: { t: 'any' } });
      i += 1;
    } else if (c === '[') {
      const cls = readClass(p, i);
      if (cls) {
        tokens.push({ k: 'item', item: { t: 'class', test: cls.test } });
        i = cls.end;
      } else {
        lit(0x5b);
        i += 1;
      }
    } else if (c === '{') {
      tokens.push({ k: 'open', mode: '{', text: '{' });
      i += 1;
    } else if (c === ',' || c === '|') {
      tokens.push({ k: 'sep', code: p.charCodeAt(i) });
      i += 1;
    } else if (c === '}' || c === ')') {
      tokens.push({ k: 'close', code: p.charCodeAt(i) });
      i += 1;
    } else {
      lit(p.charCodeAt(i));
      i += 1;
    }
  }
  return tokens;
}

export interface Pairing {
  /** Open token index → its close token index and separators. */
  readonly groups: Map<number, { close: number; seps: number[] }>;
  /** Whether some group was nested too deeply (and read as text). */
  readonly tooDeep: boolean;
  /** Whether the pattern holds a negated group `!(…)` (read as text). */
  readonly negated: boolean;
}

/** Pairs each group's opening with its closing and separators; whatever is left unpaired is text. */
function pair(tokens: Token[]): Pairing {
  const groups = new Map<number, { close: number; seps: number[] }>();
  const stack: Array<{ open: number; brace: boolean; negated: boolean; seps: number[] }> = [];
  let tooDeep = false;
  let negated = false;
  tokens.forEach((token, index) => {
    const top = stack[stack.length - 1];
    if (token.k === 'open') {
      if (stack.length >= MAX_NESTING) tooDeep = true;
      else stack.push({ open: index, brace: token.mode === '{', negated: token.mode === '!', seps: [] });
    } else if (token.k === 'sep') {
      if (top && top.brace === (token.code === 0x2c)) top.seps.push(index);
    } else if (token.k === 'close') {
      if (top && top.brace === (token.code === 0x7d)) {
        stack.pop();
        // `{a}` is no group: a brace group needs a comma. `!(…)` is refused, and otherwise read as text.
        if (top.negated) negated = true;
        else if (!top.brace || top.seps.length > 0) groups.set(top.open, { close: index, seps: top.seps });
      }
    }
  });
  return { groups, tooDeep, negated };
}

/** The items of tokens[from, to), groups built from their pairing, everything unpaired as text. */
function build(tokens: Token[], pairing: Pairing, from: number, to: number): Item[] {
  const items: Item[] = [];
  const text = (s: string) => {
    for (let j = 0; j < s.length; j += 1) items.push({ t: 'lit', code: s.charCodeAt(j) });
  };
  for (let i = from; i < to; i += 1) {
    const token = tokens[i] as Token;
    if (token.k === 'item') items.push(token.item);
    else if (token.k === 'sep' || token.k === 'close') items.push({ t: 'lit', code: token.code });
    else {
      const group = pairing.groups.get(i);
      if (!group) {
        if (token.mode === '*') items.push({ t: 'stars', n: 1 }, { t: 'lit', code: 0x28 });
        else if (token.mode === '?') items.push({ t: 'any' }, { t: 'lit', code: 0x28 });
        else text(token.text);
        continue;
      }
      const bounds = [i, ...group.seps, group.close];
      const alts: Item[][] = [];
      for (let b = 0; b + 1 < bounds.length; b += 1) {
        alts.push(build(tokens, pairing, (bounds[b] as number) + 1, bounds[b + 1] as number));
      }
      items.push({ t: 'group', mode: token.mode, alts });
      i = group.close;
    }
  }
  return items;
}

/** The items of a pattern, and how its groups paired (to tell what was refused). */
export function parseGlob(pattern: string): { items: Item[]; pairing: Pairing } {
  const tokens = tokenize(pattern);
  const pairing = pair(tokens);
  return { items: build(tokens, pairing, 0, tokens.length), pairing };
}
