import { describe, expect, it } from 'vitest';
import { createCoalescedCalls } from '../../../core/util/coalesced-calls.ts';

/** A batch function that answers when told to, recording the batches it was given. */
function gatedBatches() {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  const run = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    if (items.includes(-1)) throw new Error('refused');
    return items.map((item) => item * 10);
  };
  const open = async () => {
    while (gates.length === 0) await new Promise((r) => setTimeout(r, 1));
    gates.shift()?.();
  };
  return { batches, run, open };
}

describe('coalesced calls', () => {
  it('sends the first call at once and the calls made meanwhile together, each with its own answer', async () => {
    const { batches, run, open } = gatedBatches();
    const call = createCoalescedCalls(run);
    const first = call(1);
    const rest = [call(2), call(3), call(4)];
    expect(batches).toEqual([[1]]);
    await open();
    expect(await first).toBe(10);
    await open();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('fails only the calls of a failed batch, and bounds a batch to maxItems', async () => {
    const { batches, run, open } = gatedBatches();
    const call = createCoalescedCalls(run, { maxItems: 2 });
    const first = call(-1);
    const later = [call(5), call(6), call(7)];
    await open();
    await expect(first).rejects.toThrow('refused');
    await open();
    await open();
    expect(await Promise.all(later)).toEqual([50, 60, 70]);
    expect(batches).toEqual([[-1], [5, 6], [7]]);
  });
});

describe('coalesced calls with a gathering time', () => {
  it('sends the calls made within gatherMs of the first one in the same batch', async () => {
    const batches: number[][] = [];
    const call = createCoalescedCalls(
      async (items: number[]) => {
        batches.push(items);
        return items;
      },
      { gatherMs: 20 },
    );
    const first = call(1);
    await new Promise((r) => setTimeout(r, 5));
    const second = call(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });
});
