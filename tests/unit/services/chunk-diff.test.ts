import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { diffChunks } from '../../../core/services/chunk-diff.ts';

const chunks = (...contents: string[]) =>
  contents.map((content, index) => ({
    index,
    content,
    contentHash: createHash('sha256').update(content).digest('hex'),
  }));

describe('diffChunks', () => {
  it('reports nothing for identical versions', () => {
    const { diff, unchanged } = diffChunks(chunks('a', 'b', 'c'), chunks('a', 'b', 'c'));
    expect(diff).toEqual([]);
    expect(unchanged).toBe(3);
  });

  it('pairs an edited chunk as modified with old and new content and both indexes', () => {
    const { diff } = diffChunks(chunks('a', 'b', 'c'), chunks('a', 'B', 'c'));
    expect(diff).toEqual([{ type: 'modified', from_index: 1, to_index: 1, old_content: 'b', new_content: 'B' }]);
  });

  it('an insertion at the start is one added entry, not a cascade of modifications', () => {
    const before = chunks(...Array.from({ length: 50 }, (_, i) => `paragraph ${i}`));
    const after = chunks('a new opening', ...Array.from({ length: 50 }, (_, i) => `paragraph ${i}`));
    const { diff, unchanged } = diffChunks(before, after);
    expect(diff).toEqual([{ type: 'added', from_index: null, to_index: 0, content: 'a new opening' }]);
    expect(unchanged).toBe(50);
  });

  it('a deleted section is removed entries carrying their content', () => {
    const { diff } = diffChunks(chunks('a', 'b', 'c', 'd'), chunks('a', 'd'));
    expect(diff).toEqual([
      { type: 'removed', from_index: 1, to_index: null, content: 'b' },
      { type: 'removed', from_index: 2, to_index: null, content: 'c' },
    ]);
  });

  it('leftovers beyond the paired positions are added or removed', () => {
    const { diff } = diffChunks(chunks('a', 'x', 'z'), chunks('a', 'y1', 'y2', 'z'));
    expect(diff.map((d) => d.type)).toEqual(['modified', 'added']);
    expect(diff[0]).toMatchObject({ from_index: 1, to_index: 1, old_content: 'x', new_content: 'y1' });
    expect(diff[1]).toMatchObject({ to_index: 2, content: 'y2' });
  });

  it('handles moved chunks by keeping the longest common subsequence', () => {
    const { diff, unchanged } = diffChunks(chunks('a', 'b', 'c', 'd'), chunks('b', 'c', 'd', 'a'));
    expect(unchanged).toBe(3);
    expect(diff).toEqual([
      { type: 'removed', from_index: 0, to_index: null, content: 'a' },
      { type: 'added', from_index: null, to_index: 3, content: 'a' },
    ]);
  });
});
