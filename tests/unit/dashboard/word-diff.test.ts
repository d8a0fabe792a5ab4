import { describe, expect, it } from 'vitest';
import { wordDiff } from '../../../apps/dashboard/src/components/word-diff.ts';

const render = (parts: ReturnType<typeof wordDiff>) =>
  parts.map((p) => (p.change === 'same' ? p.text : p.change === 'added' ? `{+${p.text}+}` : `[-${p.text}-]`)).join('');

describe('the dashboard word diff', () => {
  it('marks a run of changed words as one removal followed by one addition', () => {
    expect(render(wordDiff('recorded amber storms over the bay', 'recorded violet squalls over the bay'))).toBe(
      'recorded [-amber storms-]{+violet squalls+} over the bay',
    );
  });

  it('keeps unchanged words unmarked and shows pure additions and removals', () => {
    expect(render(wordDiff('one two three', 'one two three four'))).toBe('one two three{+ four+}');
    expect(render(wordDiff('one two three', 'one three'))).toBe('one [-two -]three');
    expect(render(wordDiff('same text', 'same text'))).toBe('same text');
  });

  it('rebuilds both texts exactly from its parts', () => {
    const before = 'Field note 1: glaciers  retreat\nfast in region 4.';
    const after = 'Field note 2: glaciers advance\nslowly in region 4!';
    const parts = wordDiff(before, after);
    expect(
      parts
        .filter((p) => p.change !== 'added')
        .map((p) => p.text)
        .join(''),
    ).toBe(before);
    expect(
      parts
        .filter((p) => p.change !== 'removed')
        .map((p) => p.text)
        .join(''),
    ).toBe(after);
  });
});
