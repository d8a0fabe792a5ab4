import { describe, expect, it } from 'vitest';
import { createFairShares } from '../../../core/util/fair-shares.ts';

/** Candidates as `share:offset` strings, in offset order. */
const of = (list: string) => list.split(' ');
const share = (candidate: string) => candidate.split(':')[0] as string;

describe('fair shares', () => {
  it('takes the earliest candidate while no share has used time', () => {
    const fair = createFairShares();
    expect(fair.pick(of('a:1 b:2 a:3'), share)).toBe('a:1');
    expect(fair.pick([], share)).toBeUndefined();
  });

  it('takes the share whose handlers took the least time, in offset order within it', () => {
    const fair = createFairShares();
    fair.pick(of('a:1 b:2'), share);
    fair.charge('a', 10_000);
    expect(fair.pick(of('a:3 b:2 b:4'), share)).toBe('b:2');
    fair.charge('b', 50);
    expect(fair.pick(of('a:3 b:4'), share)).toBe('b:4');
  });

  it('starts a share that was not waiting level with the least-served share that was, never below its past', () => {
    const fair = createFairShares();
    fair.pick(of('a:1'), share);
    fair.charge('a', 60_000);
    // b arrives after a used a minute: it starts level with a, so the tie goes to the earlier offset...
    expect(fair.pick(of('a:2 b:3'), share)).toBe('a:2');
    fair.charge('a', 5_000);
    // ...and then b goes first, but with no minute of credit over a: one of a's turns later a is back.
    expect(fair.pick(of('a:4 b:3'), share)).toBe('b:3');
    fair.charge('b', 6_000);
    expect(fair.pick(of('a:4 b:5'), share)).toBe('a:4');
  });
});
