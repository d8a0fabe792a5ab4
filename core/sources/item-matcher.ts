import { compileGlob } from './glob-pattern.ts';

/** Whether an item key is part of a source: matches an include pattern and no exclude pattern. */
export type ItemMatcher = (key: string) => boolean;

/**
 * Every non-hidden item when `include` is empty. Patterns are globs over the item key (`**`,
 * `*.md`, `{a,b}`; see `glob-pattern.ts`), matched in time linear in the key's length whatever the
 * pattern. Include patterns skip hidden segments (names starting with `.`) unless they name them;
 * exclude patterns match them too.
 */
export function createItemMatcher(include: readonly string[], exclude: readonly string[]): ItemMatcher {
  const included = (include.length > 0 ? include : ['**']).map((p) => compileGlob(p, { dot: false }));
  const excluded = exclude.map((p) => compileGlob(p, { dot: true }));
  return (key) => included.some((match) => match(key)) && !excluded.some((match) => match(key));
}
