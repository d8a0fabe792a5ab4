import { afterAll } from 'vitest';

/**
 * What the tests of the current `describe` (or file) leave to undo: push onto the list, and after
 * those tests it is undone, the last pushed first.
 */
export function cleanupsAfterAll(): Array<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return cleanups;
}
