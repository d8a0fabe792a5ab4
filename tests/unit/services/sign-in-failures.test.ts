import { describe, expect, it } from 'vitest';
import { createSignInFailures } from '../../../core/services/sign-in-failures.ts';

function failures(maxTracked: number) {
  let t = 0;
  const table = createSignInFailures({ maxFailures: 3, lockoutMs: 300_000, maxTracked, now: () => t });
  return { table, at: (ms: number) => (t = ms) };
}

describe('the sign-in failure table', () => {
  it('locks an email after the last allowed wrong password, for the lockout', () => {
    const { table, at } = failures(100);
    table.record('a@example.com');
    table.record('a@example.com');
    expect(table.lockedFor('a@example.com')).toBe(0);
    table.record('a@example.com');
    expect(table.lockedFor('a@example.com')).toBe(300);
    at(299_001);
    expect(table.lockedFor('a@example.com')).toBe(1);
    at(300_000);
    expect(table.lockedFor('a@example.com')).toBe(0);
  });

  it('when full, forgets the oldest entries that lock nothing and keeps the lockouts', () => {
    const { table } = failures(10);
    for (let i = 0; i < 3; i++) table.record('victim@example.com');
    for (let i = 0; i < 50; i++) table.record(`spray-${i}@example.com`);
    expect(table.lockedFor('victim@example.com')).toBe(300);
    expect(table.size()).toBeLessThanOrEqual(10);
    // The newest single failures are kept, the oldest went first.
    table.record('spray-49@example.com');
    table.record('spray-49@example.com');
    expect(table.lockedFor('spray-49@example.com')).toBe(300);
    table.record('spray-0@example.com');
    table.record('spray-0@example.com');
    expect(table.lockedFor('spray-0@example.com')).toBe(0);
  });

  it('when every entry is a lockout, forgets the oldest lockout first', () => {
    const { table } = failures(4);
    for (const name of ['a', 'b', 'c', 'd', 'e']) for (let i = 0; i < 3; i++) table.record(name);
    expect(table.lockedFor('a')).toBe(0);
    expect(table.lockedFor('e')).toBe(300);
  });
});
