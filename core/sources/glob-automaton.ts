/**
 * Glob patterns compiled to a non-deterministic automaton without empty moves (Thompson's
 * construction, then each state's empty moves followed once at compile time), matched by following
 * every state at once: each character of a key takes each state at most once.
 */
import type { Item, Test } from './glob-syntax.ts';

const SLASH = 0x2f;
const DOT = 0x2e;

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

/**
 * The automaton of a pattern's items. `dot`: whether wildcards also match hidden segments (names
 * starting with `.`).
 */
export function compileAutomaton(items: Item[], dot: boolean): Automaton {
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
export interface Automaton {
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
export interface Scratch {
  readonly marks: Uint32Array;
  generation: number;
  current: Int32Array;
  following: Int32Array;
}

/**
 * Follows every state at once over `key`: each step takes each state at most once, so a match
 * costs at most the key's length times the automaton's moves.
 */
export function runAutomaton(a: Automaton, key: string, scratch: Scratch): boolean {
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

/** Buffers sized for `a`. */
export function scratchFor(a: Automaton): Scratch {
  const states = a.kind.length;
  return {
    marks: new Uint32Array(states),
    generation: 0,
    current: new Int32Array(states),
    following: new Int32Array(states),
  };
}
