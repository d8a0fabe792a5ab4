import { describe, expect, it } from 'vitest';
import { createLogThrottle } from '../../../apps/api/lib/log-throttle.ts';

function throttle(perWindow: number, maxGroups = 100) {
  let t = 0;
  const log = createLogThrottle({ windowMs: 60_000, perWindow, maxGroups, now: () => t });
  return { log, at: (ms: number) => (t = ms) };
}

describe('the log throttle', () => {
  it('logs the first occurrences of a window and reports the count of the rest once it is over', () => {
    const { log, at } = throttle(1);
    const admitted = Array.from({ length: 2000 }, () => log.admit('key-a')).filter(Boolean);
    expect(admitted).toHaveLength(1);
    at(59_999);
    expect(log.due()).toEqual([]);
    at(60_000);
    expect(log.due()).toEqual([{ group: 'key-a', unlogged: 1999 }]);
    expect(log.due()).toEqual([]);
  });

  it('writes one line a window while the flood goes on, and starts afresh after a quiet window', () => {
    const { log, at } = throttle(1);
    log.admit('key-a');
    log.admit('key-a');
    at(60_000);
    expect(log.due()).toEqual([{ group: 'key-a', unlogged: 1 }]);
    // The report opened the next window: its occurrences are counted, not logged.
    expect(log.admit('key-a')).toBe(false);
    at(120_000);
    expect(log.due()).toEqual([{ group: 'key-a', unlogged: 1 }]);
    at(180_000);
    expect(log.due()).toEqual([]);
    expect(log.admit('key-a')).toBe(true);
  });

  it('keeps groups apart and samples up to perWindow of each', () => {
    const { log, at } = throttle(3);
    const a = Array.from({ length: 10 }, () => log.admit('401')).filter(Boolean).length;
    const b = Array.from({ length: 2 }, () => log.admit('404')).filter(Boolean).length;
    expect([a, b]).toEqual([3, 2]);
    at(60_000);
    expect(log.due()).toEqual([{ group: '401', unlogged: 7 }]);
  });

  it('tracks at most maxGroups groups, forgetting the oldest', () => {
    const { log, at } = throttle(1, 2);
    for (const group of ['a', 'b', 'c']) {
      log.admit(group);
      log.admit(group);
    }
    at(60_000);
    expect(log.due().map((r) => r.group)).toEqual(['b', 'c']);
  });
});
