import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRecentObjects } from '../../../core/stages/recent-objects.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('recent objects', () => {
  it('gives back what was written, the latest write of a key, until it is too old', () => {
    vi.useFakeTimers();
    const recent = createRecentObjects({ maxBytes: 1000, maxAgeMs: 60_000 });
    recent.remember('a', Buffer.from('first'));
    recent.remember('a', Buffer.from('second'));
    expect(recent.recall('a')?.toString()).toBe('second');
    expect(recent.recall('b')).toBeUndefined();
    vi.advanceTimersByTime(60_001);
    expect(recent.recall('a')).toBeUndefined();
  });

  it('keeps at most maxBytes, dropping the oldest first, and never an object over an eighth of it', () => {
    const recent = createRecentObjects({ maxBytes: 800, maxAgeMs: 60_000 });
    for (let i = 0; i < 10; i++) recent.remember(`k${i}`, Buffer.alloc(100, i));
    expect(recent.recall('k0')).toBeUndefined();
    expect(recent.recall('k1')).toBeUndefined();
    expect(recent.recall('k2')?.[0]).toBe(2);
    expect(recent.recall('k9')?.[0]).toBe(9);
    recent.remember('big', Buffer.alloc(101));
    expect(recent.recall('big')).toBeUndefined();
    expect(recent.recall('k9')?.[0]).toBe(9);
  });
});
