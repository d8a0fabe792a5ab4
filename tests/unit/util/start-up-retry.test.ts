import { describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { retryStartUp } from '../../../core/util/start-up-retry.ts';

const fast = { baseDelayMs: 1, maxDelayMs: 2 };

describe('retryStartUp', () => {
  it('tries a step again while the engine is not ready, then returns its result', async () => {
    let calls = 0;
    const result = await retryStartUp(
      'Kafka',
      'create the topics',
      async () => {
        calls += 1;
        if (calls < 4) throw new KbError('engine-unavailable', 'The group coordinator is not available');
        return 'created';
      },
      { boundMs: 10_000, ...fast },
    );
    expect(result).toBe('created');
    expect(calls).toBe(4);
  });

  it('gives up after its bound with a retriable error naming the engine, the step and the last failure', async () => {
    let calls = 0;
    const failure = await retryStartUp(
      'OpenSearch',
      'create the indexes',
      async () => {
        calls += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:19200'), { code: 'ECONNREFUSED' });
      },
      { boundMs: 50, ...fast },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(KbError);
    expect(failure).toMatchObject({ code: 'engine-unavailable' });
    expect((failure as Error).message).toMatch(
      /^OpenSearch was not ready to create the indexes after 0 s and \d+ attempts \(KB_STARTUP_TIMEOUT_MS is 50\)/,
    );
    expect((failure as Error).message).toContain('ECONNREFUSED');
    expect(calls).toBeGreaterThan(1);
  });

  it('does not retry a refusal that waiting cannot heal', async () => {
    let calls = 0;
    const refusal = new KbError('config-invalid', 'Subject x-value has compatibility FULL');
    await expect(
      retryStartUp(
        'The schema registry',
        'register the schemas',
        async () => {
          calls += 1;
          throw refusal;
        },
        { boundMs: 10_000, ...fast },
      ),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });
});
