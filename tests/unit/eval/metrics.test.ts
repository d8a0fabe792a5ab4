import { describe, expect, it } from 'vitest';
import { createBm25 } from '../../../eval/lib/bm25.ts';
import { firstOccurrences, ndcgAt, percentile, recallAt } from '../../../eval/lib/metrics.ts';

const judged = new Map([
  ['d1', 1],
  ['d2', 1],
]);

describe('retrieval metrics', () => {
  it('nDCG@10 is 1 for the ideal ranking and discounts later hits by log2(rank + 1)', () => {
    expect(ndcgAt(10, ['d1', 'd2', 'x'], judged)).toBeCloseTo(1, 10);
    // Hits at ranks 2 and 3: (1/log2 3 + 1/log2 4) / (1 + 1/log2 3).
    const expected = (1 / Math.log2(3) + 1 / 2) / (1 + 1 / Math.log2(3));
    expect(ndcgAt(10, ['x', 'd1', 'd2'], judged)).toBeCloseTo(expected, 10);
    expect(ndcgAt(10, ['x', 'y'], judged)).toBe(0);
  });

  it('nDCG@k ignores hits after rank k', () => {
    expect(ndcgAt(1, ['x', 'd1'], judged)).toBe(0);
  });

  it('recall@k is the share of judged documents in the first k', () => {
    expect(recallAt(100, ['d2', 'x'], judged)).toBe(0.5);
    expect(recallAt(1, ['x', 'd1', 'd2'], judged)).toBe(0);
  });

  it('a document ranks by its best chunk', () => {
    expect(firstOccurrences(['a', 'b', 'a', 'c', 'b'])).toEqual(['a', 'b', 'c']);
  });

  it('percentile by nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 100)).toBe(5);
  });
});

describe('BM25 baseline', () => {
  it('ranks the document sharing the rarer stemmed terms first', () => {
    const bm25 = createBm25([
      { id: 'a', text: 'The cat sat on the mat.' },
      { id: 'b', text: 'Proteins fold into structures; folding of proteins is studied.' },
      { id: 'c', text: 'A protein and a cat.' },
    ]);
    expect(bm25.search('protein folding', 3)).toEqual(['b', 'c']);
    expect(bm25.search('the of', 3)).toEqual([]);
  });
});
