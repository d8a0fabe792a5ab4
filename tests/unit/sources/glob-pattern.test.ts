import { describe, expect, it } from 'vitest';
import {
  compileGlob,
  globPatternProblems,
  MAX_PATTERN_MOVES,
  MAX_SOURCE_MOVES,
} from '../../../core/sources/glob-pattern.ts';
import { createItemMatcher } from '../../../core/sources/item-matcher.ts';

/** Each pattern with the keys it matches and the keys it does not, without and with `dot`. */
function expectMatches(pattern: string, yes: string[], no: string[], dot = false): void {
  const match = compileGlob(pattern, { dot });
  for (const key of yes) expect(match(key), `${pattern} should match ${key}`).toBe(true);
  for (const key of no) expect(match(key), `${pattern} should not match ${key}`).toBe(false);
}

describe('glob patterns', () => {
  it('match `*` within a segment and `**` across segments, hidden segments only when named', () => {
    expectMatches('*', ['a', 'a.md', 'a/'], ['a/b', '.a', '']);
    expectMatches('**', ['a', 'a/b', 'a/b/c.md', 'http://h/x'], ['.a', 'a/.b', 'x/.git/config', '']);
    expectMatches('**', ['.a', 'a/.b'], [''], true);
    expectMatches('**/*.md', ['a.md', 'x/a.md', 'x/y/a.md'], ['.md', 'x/.a.md', '.x/a.md', 'a.txt']);
    expectMatches('**/*.md', ['.md', 'x/.a.md', '.x/a.md'], ['a.txt'], true);
    expectMatches('drafts/**', ['drafts', 'drafts/', 'drafts/a', 'drafts/a/b'], ['x/drafts/a', 'draftsy']);
    expectMatches('**/drafts/**', ['drafts/a', 'x/drafts/a', 'http://127.0.0.1:9/drafts/wip.md'], ['x/draft/a']);
    expectMatches('a/**/b', ['a/b', 'a/x/b', 'a/x/y/b'], ['ab', 'a/.x/b', 'a/x/c']);
    expectMatches('x/**/', ['x/', 'x/a/'], ['x/a']);
    expectMatches('**/.*', ['.a', 'x/.a'], ['x/a']);
    expectMatches('.github/**', ['.github/x'], ['.github/.x', 'github/x']);
    expectMatches('a**b', ['ab', 'axb'], ['a/b', 'ax/b']);
    expectMatches('***', ['a'], ['a/b']);
    expectMatches('a/*', ['a/b', 'a/b/'], ['a/', 'a/b/c']);
    expectMatches('https://h/blog/*', ['https://h/blog/post', 'https://h/blog/post/'], ['https://h/blog/a/b']);
    expectMatches('a*', ['a', 'ab', 'a.b'], ['a/', 'ba']);
  });

  it('match `?`, bracket expressions, braces, groups and escapes', () => {
    expectMatches('?.md', ['a.md'], ['.md', 'ab.md', '/.md']);
    expectMatches('[ab].md', ['a.md', 'b.md'], ['c.md']);
    expectMatches('[a-c].md', ['b.md'], ['d.md']);
    expectMatches('[!ab].md', ['c.md'], ['a.md', '/.md']);
    expectMatches('[^ab].md', ['c.md'], ['a.md']);
    expectMatches('[[:digit:]]*', ['1a', '2'], ['a1']);
    expectMatches('[]]', [']'], ['a']);
    expectMatches('[z-a]', ['[z-a]'], ['b']);
    expectMatches('*.{md,txt}', ['a.md', 'a.txt'], ['a.pdf', 'a.{md,txt}']);
    expectMatches('{a,b/c}/*', ['a/x', 'b/c/x'], ['b/x']);
    expectMatches('{a,{b,c}}.md', ['a.md', 'b.md', 'c.md'], ['d.md']);
    expectMatches('x{,y}.md', ['x.md', 'xy.md'], ['xz.md']);
    expectMatches('{a}.md', ['{a}.md'], ['a.md']);
    expectMatches('{a,b', ['{a,b'], ['a']);
    expectMatches('@(a|b).md', ['a.md', 'b.md'], ['ab.md']);
    expectMatches('+(a|b).md', ['a.md', 'abba.md'], ['.md', 'c.md']);
    expectMatches('*(a|b).md', ['.md', 'ab.md'], ['c.md']);
    expectMatches('?(a).md', ['.md', 'a.md'], ['aa.md']);
    expectMatches('@(a', ['@(a'], ['a']);
    expectMatches('\\*.md', ['*.md'], ['a.md']);
    expectMatches('a|b', ['a|b'], ['a']);
    expectMatches('a.b+c$', ['a.b+c$'], ['axb+c$', 'a.bbc$']);
    expectMatches('*.md', ['a.md'], ['a.MD']);
  });

  it('negate a whole pattern with a leading `!` and ignore a leading `./`', () => {
    expectMatches('!*.md', ['a.txt', 'x/a.md'], ['a.md']);
    expectMatches('./a', ['a'], ['b']);
  });

  it('match a pattern that makes backtracking matchers take exponential time, on long names', () => {
    const hostile = compileGlob('**/*a*a*a*a*a*a*a*a*b', { dot: false });
    expect(hostile('a'.repeat(50))).toBe(false);
    expect(hostile(`x/${'a'.repeat(5000)}`)).toBe(false);
    expect(hostile(`x/${'a'.repeat(5000)}b`)).toBe(true);
    const matcher = createItemMatcher(['**/*a*a*a*a*a*a*a*a*b'], ['*a*a*a*a*a*a*a*a*a*a*a*a*c']);
    for (let i = 0; i < 100; i += 1) expect(matcher(`${'a'.repeat(50 + i)}`)).toBe(false);
  }, 10_000);
});

describe('glob pattern validation', () => {
  it('names each pattern that is not supported, nested too deep or too complex', () => {
    expect(globPatternProblems({ include: ['**/*.md', 'guides/**', '*.{md,txt}'], exclude: ['drafts/**'] })).toEqual(
      [],
    );
    expect(globPatternProblems({ include: ['**/*a*a*a*a*a*a*a*a*b'], exclude: [] })).toEqual([]);
    const problems = globPatternProblems({
      include: ['ok/**', '!(a).md', `${'{'.repeat(20)}a,b${'}'.repeat(20)}`],
      exclude: ['**/'.repeat(170)],
    });
    expect(problems.map((p) => p.field)).toEqual(['include/1', 'include/2', 'exclude/0']);
    expect(problems[0]?.message).toMatch(/negated group/);
    expect(problems[1]?.message).toMatch(/nests groups more than 16 deep/);
    expect(problems[2]?.message).toMatch(new RegExp(`too complex.*at most ${MAX_PATTERN_MOVES}`));
  });

  it('bounds the patterns of a source together', () => {
    const many = Array.from({ length: 100 }, (_, i) => `https://example.com/docs/section-${i}/**/*.{md,html}`);
    expect(globPatternProblems({ include: many, exclude: [] })).toEqual([]);
    const heavy = Array.from({ length: 100 }, () => '*a'.repeat(255));
    const problems = globPatternProblems({ include: heavy, exclude: [] });
    expect(problems).toEqual([{ field: 'include', message: expect.stringMatching(`at most ${MAX_SOURCE_MOVES}`) }]);
  });
});
