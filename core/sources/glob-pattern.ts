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
 * mate are plain characters. Matching is case-sensitive; a key may end with one `/` more than a
 * pattern whose last segment is `*` or `**`. Without `dot`, a wildcard that starts a segment does not match a segment starting with
 * `.` (hidden items), and `**` crosses no such segment; an explicit `.` does.
 */

import { type Automaton, compileAutomaton, runAutomaton, scratchFor } from './glob-automaton.ts';
import { MAX_NESTING, type Pairing, parseGlob } from './glob-syntax.ts';

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
  const { items, pairing } = parseGlob(body);
  return { automaton: compileAutomaton(items, dot), negated, pairing };
}

/**
 * Compiles `pattern`. `dot`: whether wildcards also match hidden segments (names starting with
 * `.`). An empty key matches nothing.
 */
export function compileGlob(pattern: string, options: { readonly dot: boolean }): GlobMatcher {
  const { automaton, negated } = compilePattern(pattern, options.dot);
  const scratch = scratchFor(automaton);
  return (key) => key.length > 0 && runAutomaton(automaton, key, scratch) !== negated;
}

/**
 * What is wrong with the patterns a client gives, for a 422 naming each (`include/<i>`,
 * `exclude/<i>`): a negated group `!(…)` (not supported: `exclude` says it), groups nested more
 * than {@link MAX_NESTING} deep, a pattern too complex to match quickly, or patterns too complex
 * together. Complexity counts the moves of the compiled automaton (each counted for a next
 * character `.` and for any other): about two per character, and more per alternative that a
 * wildcard or group opens.
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
