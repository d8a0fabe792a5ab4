import { describe, expect, it } from 'vitest';
import { createGroupCommit } from '../../../core/util/group-commit.ts';

const turn = () => new Promise((r) => setImmediate(r));

describe('group commit', () => {
  it('flushes at once when idle, then everything submitted meanwhile in one flush, in order', async () => {
    const flushes: number[][] = [];
    let release: () => void = () => undefined;
    const submit = createGroupCommit<number>(async (items) => {
      flushes.push(items);
      if (flushes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = submit(1);
    await turn();
    const rest = [submit(2), submit(3), submit(4)];
    await turn();
    expect(flushes).toEqual([[1]]);
    release();
    await Promise.all([first, ...rest]);
    expect(flushes).toEqual([[1], [2, 3, 4]]);
  });

  it('with isolated failures, a refused item fails alone and the others of its flush succeed', async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const submit = createGroupCommit<string>(
      async (items) => {
        calls += 1;
        if (calls === 1) await new Promise<void>((resolve) => (release = resolve));
        if (items.includes('bad')) throw new Error(`refused ${items.join(',')}`);
      },
      { isolateFailures: true },
    );
    const first = submit('first');
    await turn();
    const results = Promise.allSettled([submit('a'), submit('bad'), submit('b')]);
    release();
    await first;
    expect((await results).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('without isolation, a failed flush rejects every item in it', async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const submit = createGroupCommit<string>(async (items) => {
      calls += 1;
      if (calls === 1) await new Promise<void>((resolve) => (release = resolve));
      if (items.includes('bad')) throw new Error('refused');
    });
    const first = submit('first');
    await turn();
    const results = Promise.allSettled([submit('a'), submit('bad')]);
    release();
    await first;
    expect((await results).map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
