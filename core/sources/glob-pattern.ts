/**
 * Glob patterns over item keys, matched in time proportional to the key's length times the
 * pattern's size, whatever the pattern: a pattern is compiled to a non-deterministic automaton
 * whose states are followed all at once over the key (Thompson's construction), so no input can
 * make a match backtrack. (A regular expression with many `*` in a row, such as
 * `**\/*a*a*a*a*a*a*a*a*b`, takes exponential time on a long name of `a`s.)
 *
 * Syntax: `*` (any run of characters within a path segment), `**` as a whole segment (any number
 * of segments: `a/**\/b` matches `a/b` and `a/x/y/b`; `a/**` matches `a` and everything under it),
 * `?` (one character other than `/`), `[abc]`, `[a-z]`, `[!a]` / `[^a]`, `[[:alpha:]]`,
 * `{a,b}` (nested), the groups `@(a|b)`, `?(a|b)`, `+(a|b)`, `*(a|b)`, `\` escaping the next
 * character, and a leading `!` negating the whole pattern. `{`, `[` or `(` without their closing
 * mate are plain characters. Matching is case-sensitive; a key may end with one `/` more than the
 * pattern. Without `dot`, a wildcard that starts a segment does not match a segment starting with
 * `.` (hidden items), and `**` crosses no such segment; an explicit `.` does.
 */

/** Groups nested deeper than this are refused by {@link globPatternProblem} (and read as plain text). */
const MAX_NESTING = 16;

const SLASH = 0x2f;
const DOT = 0x2e;

type Test = (code: number) => boolean;

type Item =
  | { readonly t: 'lit'; readonly code: number }
  | { readonly t: 'any' }
  | { readonly t: 'stars'; readonly n: number }
  | { readonly t: 'class'; readonly test: Test }
  | { readonly t: 'group'; readonly mode: GroupMode; readonly alts: Item[][] };

type GroupMode = '{' | '@' | '?' | '+' | '*' | '!';

// ---------------------------------------------------------------- tokens

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
      return { test: (code) => code !== SLASH && test(code), end: i + 1 };
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

interface Pairing {
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

// ---------------------------------------------------------------- automaton

enum Kind {
  /** Consumes the character `arg`. */
  Char,
  /** Consumes any character but `/`. */
  InSegment,
  /** Consumes any character but `/`, and no `.` starting a segment without `dot`. */
  SegmentChar,
  /** Consumes any character, and no `.` starting a segment without `dot`. */
  Deep,
  /** Consumes a character passing `tests[arg]`. */
  Class,
  /** Moves to each of `outs` without consuming. */
  Split,
  /** Moves to `out` when the next character is not a `.` (or the key has ended). */
  NotDot,
  Accept,
}

function compile(items: Item[], dot: boolean): Automaton {
  const kind: Kind[] = [];
  const arg: number[] = [];
  const out: number[] = [];
  const outs: number[][] = [];
  const tests: Test[] = [];
  const node = (k: Kind, next: number, a = 0): number => {
    kind.push(k);
    arg.push(a);
    out.push(next);
    outs.push([]);
    return kind.length - 1;
  };
  const split = (targets: number[]): number => {
    const id = node(Kind.Split, -1);
    outs[id] = targets;
    return id;
  };
  /** Zero or more characters of `k`, then `next`. */
  const loop = (k: Kind, next: number): number => {
    const id = split([]);
    outs[id] = [node(k, id), next];
    return id;
  };
  const isSlash = (item: Item | undefined) => item?.t === 'lit' && item.code === SLASH;
  const guard = (next: number) => (dot ? next : node(Kind.NotDot, next));

  /**
   * States matching `seq` then going to `next`. `leftEdge`/`rightEdge`: whether the sequence
   * starts/ends at a segment boundary; `patternEnd`: whether it ends the whole pattern.
   */
  function sequence(seq: Item[], next: number, leftEdge: boolean, rightEdge: boolean, patternEnd: boolean): number {
    let at = next;
    for (let j = seq.length - 1; j >= 0; j -= 1) {
      const item = seq[j] as Item;
      const first = j === 0;
      const last = j === seq.length - 1;
      const segmentStart = first ? leftEdge : isSlash(seq[j - 1]);
      const segmentEnd = last ? rightEdge : isSlash(seq[j + 1]);
      switch (item.t) {
        case 'lit':
          at = node(Kind.Char, at, item.code);
          break;
        case 'any':
          at = node(Kind.InSegment, at);
          if (segmentStart) at = guard(at);
          break;
        case 'class':
          tests.push(item.test);
          at = node(Kind.Class, at, tests.length - 1);
          break;
        case 'stars':
          if (item.n === 2 && segmentStart && segmentEnd) {
            const taken = globstar(seq, j, at, next, patternEnd);
            at = taken.state;
            // `a/**`: the slash before was taken in.
            if (taken.slashBefore) j -= 1;
          } else if (last && patternEnd && segmentStart) {
            // `a/*`: a last segment of only `*` is not empty.
            const again = split([]);
            const one = node(Kind.InSegment, again);
            outs[again] = [one, at];
            at = guard(one);
          } else {
            at = loop(Kind.InSegment, at);
            if (segmentStart) at = guard(at);
          }
          break;
        case 'group':
          at = group(item, at, segmentStart, segmentEnd && item.mode === '{', last && patternEnd);
          break;
      }
    }
    return at;
  }

  /**
   * `**` at seq[j], a whole segment. Before a `/` of the same sequence: any number of segments,
   * each with its slash (the slash after is consumed here: `at` already holds what follows it).
   * Ending the pattern after a `/`: optionally that slash and anything under it (`slashBefore`:
   * the slash before is part of the states). Elsewhere: any characters.
   */
  function globstar(
    seq: Item[],
    j: number,
    at: number,
    next: number,
    patternEnd: boolean,
  ): { state: number; slashBefore: boolean } {
    if (isSlash(seq[j + 1])) {
      // `at` starts at the slash after: skip it, loop over `segment/` and rejoin after that slash.
      const afterSlash = out[at] as number;
      kind[at] = Kind.Split;
      const repeat = at;
      const segment = loop(Kind.SegmentChar, node(Kind.Char, repeat, SLASH));
      outs[repeat] = [guard(segment), afterSlash];
      return { state: repeat, slashBefore: false };
    }
    if (j === seq.length - 1 && patternEnd && j > 0 && at === next) {
      const under = node(Kind.Char, loop(Kind.Deep, next), SLASH);
      return { state: split([under, next]), slashBefore: true };
    }
    return { state: guard(loop(Kind.Deep, at)), slashBefore: false };
  }

  function group(
    item: Extract<Item, { t: 'group' }>,
    next: number,
    leftEdge: boolean,
    rightEdge: boolean,
    patternEnd: boolean,
  ): number {
    const alts = (to: number, edges: boolean) =>
      item.alts.map((alt) => sequence(alt, to, edges && leftEdge, edges && rightEdge, edges && patternEnd));
    switch (item.mode) {
      case '{':
      case '@':
        return split(alts(next, true));
      case '?':
        return split([...alts(next, false), next]);
      case '*': {
        const again = split([]);
        outs[again] = [...alts(again, false), next];
        return again;
      }
      case '+': {
        const again = split([]);
        const once = alts(again, false);
        outs[again] = [...once, next];
        return split(once);
      }
      default:
        throw new Error('A negated group is never built.');
    }
  }

  const accept = node(Kind.Accept, -1);
  const last = items[items.length - 1];
  // A key may end with one `/` more than a pattern whose last segment is `*` or `**` (`docs/*`
  // matches the page `docs/intro/`).
  const end =
    last?.t === 'stars' && (items.length === 1 || isSlash(items[items.length - 2]))
      ? split([accept, node(Kind.Char, accept, SLASH)])
      : accept;
  const start = sequence(items, end, true, true, true);
  return pack({ kind, arg, out, outs, tests, dot, start });
}

/**
 * The automaton without moves that consume nothing: the consuming states (and the accepting one),
 * each with the states it leads to after its character, once for a next character `.` and once
 * for any other (a `NotDot` guard passes only the latter).
 */
interface Automaton {
  readonly kind: Uint8Array;
  readonly arg: Int32Array;
  /** `next[*][start[s] .. start[s + 1])`: where state `s` leads, by whether the next character is `.`. */
  readonly nextStart: readonly [Int32Array, Int32Array];
  readonly next: readonly [Int32Array, Int32Array];
  /** The states before the first character, by whether it is `.`. */
  readonly initial: readonly [Int32Array, Int32Array];
  readonly accept: number;
  readonly tests: Test[];
  readonly dot: boolean;
  /** Moves in all: the size of the automaton. */
  readonly moves: number;
}

function pack(raw: {
  kind: Kind[];
  arg: number[];
  out: number[];
  outs: number[][];
  tests: Test[];
  dot: boolean;
  start: number;
}): Automaton {
  const consuming: number[] = [];
  const index = new Int32Array(raw.kind.length).fill(-1);
  raw.kind.forEach((k, s) => {
    if (k !== Kind.Split && k !== Kind.NotDot) {
      index[s] = consuming.length;
      consuming.push(s);
    }
  });
  const marks = new Int32Array(raw.kind.length);
  let mark = 0;
  /** The consuming states reached from `from` without consuming, the next character being `.` or not. */
  const reach = (from: number, nextIsDot: boolean): number[] => {
    const found: number[] = [];
    mark += 1;
    const stack = [from];
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (marks[s] === mark) continue;
      marks[s] = mark;
      const k = raw.kind[s];
      if (k === Kind.Split) for (const o of raw.outs[s] as number[]) stack.push(o);
      else if (k === Kind.NotDot) {
        if (!nextIsDot) stack.push(raw.out[s] as number);
      } else found.push(index[s] as number);
    }
    return found;
  };
  const lists = ([true, false] as const).map((nextIsDot) => {
    const start = new Int32Array(consuming.length + 1);
    const all: number[] = [];
    consuming.forEach((s, i) => {
      if (raw.kind[s] !== Kind.Accept) all.push(...reach(raw.out[s] as number, nextIsDot));
      start[i + 1] = all.length;
    });
    return { start, next: Int32Array.from(all) };
  }) as [{ start: Int32Array; next: Int32Array }, { start: Int32Array; next: Int32Array }];
  return {
    kind: Uint8Array.from(consuming.map((s) => raw.kind[s] as Kind)),
    arg: Int32Array.from(consuming.map((s) => raw.arg[s] as number)),
    nextStart: [lists[0].start, lists[1].start],
    next: [lists[0].next, lists[1].next],
    initial: [Int32Array.from(reach(raw.start, true)), Int32Array.from(reach(raw.start, false))],
    accept: consuming.findIndex((s) => raw.kind[s] === Kind.Accept),
    tests: raw.tests,
    dot: raw.dot,
    moves: lists[0].next.length + lists[1].next.length,
  };
}

/** Buffers for one match at a time (matching is synchronous). */
interface Scratch {
  readonly marks: Uint32Array;
  generation: number;
  current: Int32Array;
  following: Int32Array;
}

/**
 * Follows every state at once over `key`: each step takes each state at most once, so a match
 * costs at most the key's length times the automaton's moves.
 */
function run(a: Automaton, key: string, scratch: Scratch): boolean {
  const { kind, arg, tests } = a;
  const marks = scratch.marks;
  const first = a.initial[key.charCodeAt(0) === DOT ? 0 : 1];
  let current = scratch.current;
  let following = scratch.following;
  current.set(first);
  let size = first.length;
  for (let i = 0; i < key.length && size > 0; i += 1) {
    const c = key.charCodeAt(i);
    const hiddenStart = !a.dot && c === DOT && (i === 0 || key.charCodeAt(i - 1) === SLASH);
    const variant = key.charCodeAt(i + 1) === DOT ? 0 : 1;
    const starts = a.nextStart[variant];
    const next = a.next[variant];
    if (scratch.generation >= 0xfffffffe) {
      marks.fill(0);
      scratch.generation = 0;
    }
    const mark = ++scratch.generation;
    let count = 0;
    for (let j = 0; j < size; j += 1) {
      const s = current[j] as number;
      let ok: boolean;
      switch (kind[s]) {
        case Kind.Char:
          ok = c === arg[s];
          break;
        case Kind.InSegment:
          ok = c !== SLASH;
          break;
        case Kind.SegmentChar:
          ok = c !== SLASH && !hiddenStart;
          break;
        case Kind.Deep:
          ok = !hiddenStart;
          break;
        case Kind.Class:
          ok = (tests[arg[s] as number] as Test)(c);
          break;
        default:
          ok = false;
      }
      if (!ok) continue;
      for (let o = starts[s] as number, e = starts[s + 1] as number; o < e; o += 1) {
        const t = next[o] as number;
        if (marks[t] !== mark) {
          marks[t] = mark;
          following[count++] = t;
        }
      }
    }
    const swap = current;
    current = following;
    following = swap;
    size = count;
  }
  for (let j = 0; j < size; j += 1) if (current[j] === a.accept) return true;
  return false;
}

/** A compiled pattern: whether a whole key matches it. */
export type GlobMatcher = (key: string) => boolean;

/** Most moves of one pattern's automaton: a match costs at most the key's length times this. */
export const MAX_PATTERN_MOVES = 4096;
/** Most moves of a source's include and exclude patterns together. */
export const MAX_SOURCE_MOVES = 16_384;

interface Compiled {
  readonly automaton: Automaton;
  readonly negated: boolean;
  readonly pairing: Pairing;
}

function compilePattern(pattern: string, dot: boolean): Compiled {
  let body = pattern;
  let negated = false;
  while (body.startsWith('!') && !body.startsWith('!(')) {
    negated = !negated;
    body = body.slice(1);
  }
  while (body.startsWith('./')) body = body.slice(2);
  const tokens = tokenize(body);
  const pairing = pair(tokens);
  return { automaton: compile(build(tokens, pairing, 0, tokens.length), dot), negated, pairing };
}

/**
 * Compiles `pattern`. `dot`: whether wildcards also match hidden segments (names starting with
 * `.`). An empty key matches nothing.
 */
export function compileGlob(pattern: string, options: { readonly dot: boolean }): GlobMatcher {
  const { automaton, negated } = compilePattern(pattern, options.dot);
  const states = automaton.kind.length;
  const scratch: Scratch = {
    marks: new Uint32Array(states),
    generation: 0,
    current: new Int32Array(states),
    following: new Int32Array(states),
  };
  return (key) => key.length > 0 && run(automaton, key, scratch) !== negated;
}

/**
 * What is wrong with the patterns a client gives, for a 422 naming each (`include/<i>`,
 * `exclude/<i>`): a negated group `!(…)` (not supported: `exclude` says it), groups nested more
 * than {@link MAX_NESTING} deep, a pattern too complex to match quickly, or patterns too complex
 * together. Complexity counts the moves of the compiled automaton: about one per character, plus
 * one per alternative that a wildcard or group opens where the pattern can go on.
 */
export function globPatternProblems(lists: {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  let total = 0;
  for (const [name, patterns] of [
    ['include', lists.include],
    ['exclude', lists.exclude],
  ] as const) {
    patterns.forEach((pattern, i) => {
      const field = `${name}/${i}`;
      const { automaton, pairing } = compilePattern(pattern, name === 'exclude');
      total += automaton.moves;
      if (pairing.tooDeep) problems.push({ field, message: `nests groups more than ${MAX_NESTING} deep` });
      else if (pairing.negated) {
        problems.push({
          field,
          message: 'uses a negated group "!(…)", which is not supported; put what it leaves out in exclude',
        });
      } else if (automaton.moves > MAX_PATTERN_MOVES) {
        problems.push({
          field,
          message: `is too complex to match quickly (complexity ${automaton.moves}; at most ${MAX_PATTERN_MOVES}): use fewer wildcards and groups`,
        });
      }
    });
  }
  if (problems.length === 0 && total > MAX_SOURCE_MOVES) {
    problems.push({
      field: 'include',
      message: `and exclude together are too complex to match quickly (complexity ${total}; at most ${MAX_SOURCE_MOVES}): use fewer or simpler patterns`,
    });
  }
  return problems;
}
