import { describe, expect, it } from 'vitest';
import {
  backlogRetryAfter,
  DEFAULT_RETRY_AFTER_S,
  MAX_RETRY_AFTER_S,
} from '../../core/services/ingestion-backlog.service.ts';

/** `Retry-After` of a write refused for a full backlog: the time the measured drain rate needs to make room. */
describe('backlogRetryAfter', () => {
  it('is the seconds the drain rate needs to take the excess away, rounded up', () => {
    expect(backlogRetryAfter(30, 10)).toBe(3);
    expect(backlogRetryAfter(31, 10)).toBe(4);
    expect(backlogRetryAfter(5, 0.5)).toBe(10);
  });

  it('is at least 1 s, even when one slot frees in a fraction of a second', () => {
    expect(backlogRetryAfter(1, 13)).toBe(1);
    expect(backlogRetryAfter(0, 13)).toBe(1);
  });

  it('is bounded when the backlog drains slowly, and a default when nothing drained lately', () => {
    expect(backlogRetryAfter(10_000, 1)).toBe(MAX_RETRY_AFTER_S);
    expect(backlogRetryAfter(3, 0)).toBe(DEFAULT_RETRY_AFTER_S);
    expect(backlogRetryAfter(3, Number.NaN)).toBe(DEFAULT_RETRY_AFTER_S);
  });
});
