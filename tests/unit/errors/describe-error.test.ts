import { describe, expect, it } from 'vitest';
import { describeError } from '../../../core/errors/describe-error.ts';
import { KbError } from '../../../core/errors/kb-error.ts';
import { storeError } from '../../../core/ports/account-store/clickhouse-context.ts';

describe('describeError', () => {
  it('keeps a message and the causes below it, once each', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:18123'), { code: 'ECONNREFUSED' });
    const error = new KbError('engine-unavailable', 'ClickHouse is unreachable', { cause });
    expect(describeError(error)).toBe('ClickHouse is unreachable: connect ECONNREFUSED 127.0.0.1:18123');
    const nested = new KbError('engine-unavailable', `ClickHouse is unreachable: ${cause.message}`, { cause });
    expect(describeError(nested)).toBe('ClickHouse is unreachable: connect ECONNREFUSED 127.0.0.1:18123');
  });

  it('says something for errors whose message is empty', () => {
    const aggregate = Object.assign(
      new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:19092'), { code: 'ECONNREFUSED' })], ''),
      { code: 'ECONNREFUSED' },
    );
    expect(describeError(aggregate)).toBe('AggregateError (code ECONNREFUSED, connect ECONNREFUSED ::1:19092)');
    const answer = Object.assign(new Error(''), { name: 'ResponseError', meta: { statusCode: 503 } });
    expect(describeError(answer)).toBe('ResponseError (HTTP status 503)');
    expect(describeError(new Error(''))).toMatch(/empty error/);
    expect(describeError(undefined)).toMatch(/empty error/);
    expect(describeError('plain text')).toBe('plain text');
  });

  it('names a ClickHouse answer without a body instead of leaving the reason blank', () => {
    expect(storeError(new Error(''), 'creating database x').message).toBe(
      'ClickHouse is unreachable (creating database x): an error answer without a message',
    );
  });
});
