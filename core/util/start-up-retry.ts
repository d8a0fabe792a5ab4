import { describeError } from '../errors/describe-error.ts';
import { isRetriable, KbError } from '../errors/kb-error.ts';
import { backoffDelay, sleep } from './time.ts';

export interface StartUpRetryOptions {
  /** Longest time to keep trying, from the first attempt. */
  readonly boundMs: number;
  /** First backoff delay; doubles up to `maxDelayMs` (full jitter above half of it). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Called before each new attempt, with the failure that caused it. */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs one start-up set-up step (create a topic, register a schema, create an index, migrate a
 * database) and tries it again while it fails with a retriable error: an engine that is still
 * starting, a Kafka group coordinator not elected yet, a registry answering 5xx. Backoff is
 * jittered and exponential; after `boundMs` the step fails with a retriable `engine-unavailable`
 * that names the engine and the step and carries the last failure as cause.
 *
 * Non-retriable failures (a refused definition, invalid configuration) are rethrown at once: they
 * do not heal by waiting. The step itself must be idempotent, since an attempt whose answer was
 * lost may have taken effect.
 */
export async function retryStartUp<T>(
  engine: string,
  step: string,
  run: () => Promise<T>,
  options: StartUpRetryOptions,
): Promise<T> {
  const started = Date.now();
  const base = options.baseDelayMs ?? 200;
  const max = options.maxDelayMs ?? 2_000;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (!isRetriable(error)) throw error;
      const elapsed = Date.now() - started;
      const delay = backoffDelay(attempt, base, max, Math.random, 0.5);
      if (elapsed + delay > options.boundMs) {
        const detail = describeError(error);
        throw new KbError(
          'engine-unavailable',
          `${engine} was not ready to ${step} after ${Math.round(elapsed / 1000)} s and ${attempt} attempts (KB_STARTUP_TIMEOUT_MS is ${options.boundMs}): ${detail}`,
          { cause: error, engine },
        );
      }
      options.onRetry?.(error, attempt, delay);
      await sleep(delay);
    }
  }
}
