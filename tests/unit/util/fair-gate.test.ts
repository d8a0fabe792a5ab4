import { describe, expect, it } from 'vitest';
import { createFairGate } from '../../../core/util/fair-gate.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fair gate', () => {
  it('runs at most its slots at once, and lets a waiting quiet share go before more of a busy one', async () => {
    const gate = createFairGate({ slots: 1 });
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const call = (share: string, name: string, ms: number) =>
      gate.run(share, async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(ms);
        running -= 1;
        order.push(name);
      });
    const all = [
      call('busy', 'busy-1', 60),
      call('busy', 'busy-2', 60),
      call('busy', 'busy-3', 60),
      call('quiet', 'quiet-1', 1),
      call('quiet', 'quiet-2', 1),
    ];
    expect(gate.waiting).toBe(4);
    await Promise.all(all);
    expect(most).toBe(1);
    expect(order).toEqual(['busy-1', 'quiet-1', 'quiet-2', 'busy-2', 'busy-3']);
  });

  it('refuses callers beyond its wait list and after it is closed', async () => {
    const gate = createFairGate({ slots: 1, maxWaiting: 1, busy: () => new Error('busy') });
    const first = gate.run('a', () => sleep(30));
    const second = gate.run('a', () => sleep(1));
    await expect(gate.run('b', () => sleep(1))).rejects.toThrow('busy');
    gate.close(new Error('closed'));
    await expect(second).rejects.toThrow('closed');
    await first;
    await expect(gate.run('a', () => sleep(1))).rejects.toThrow('closed');
  });
});
