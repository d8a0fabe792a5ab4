import picomatch from 'picomatch';

/** Whether an item key is part of a source: matches an include pattern and no exclude pattern. */
export type ItemMatcher = (key: string) => boolean;

/** Every non-hidden item when `include` is empty. Patterns are globs over the item key (`**`, `*.md`, `{a,b}`). */
export function createItemMatcher(include: readonly string[], exclude: readonly string[]): ItemMatcher {
  const included = picomatch(include.length > 0 ? [...include] : ['**'], { dot: false });
  const excluded = exclude.length > 0 ? picomatch([...exclude], { dot: true }) : () => false;
  return (key) => included(key) && !excluded(key);
}
