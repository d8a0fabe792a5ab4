import type { EventBase, StageName } from '../events/events.ts';

/**
 * One pipeline stage: consumes its input topic, whose events are of type `E`, in its own consumer
 * group and publishes its output event. `handle` must be idempotent (delivery is at-least-once) and
 * throw a `KbError` whose `retriable` flag tells the runner whether to retry or dead-letter.
 */
export interface StageDefinition<E extends EventBase = EventBase> {
  readonly name: StageName;
  readonly inputTopic: string;
  /**
   * `signal` aborts when the process is shutting down: a long handler stops at its next batch
   * boundary by throwing, which leaves the event uncommitted for redelivery.
   */
  handle(event: E, attempt: number, signal: AbortSignal): Promise<void>;
}
