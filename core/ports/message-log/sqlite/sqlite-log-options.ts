import type { DeliveredMessage } from '../message-log.port.ts';

/** Where an adapter-level failure happened, for {@link SqliteMessageLogOptions.onError}. */
export interface MessageLogErrorContext {
  readonly groupId: string;
  /** `handler`: a handler rejected (the message is redelivered); `poll`: the consumer loop failed a round. */
  readonly phase: 'handler' | 'poll' | 'retention';
  readonly message?: DeliveredMessage;
}

export interface SqliteMessageLogOptions {
  /** SQLite database file of the log; its directory is created if missing. Several processes may share it. */
  readonly file: string;
  /** How often consumers look for new messages and group changes. Default 50 ms. */
  readonly pollIntervalMs?: number;
  /**
   * How long a consumer's partition lease lasts without renewal (renewed every third of it). A
   * consumer that dies without stopping loses its partitions to the rest of its group this long
   * after its last renewal. Default 10 000 ms.
   */
  readonly leaseMs?: number;
  /** Pause before a message whose handler rejected is delivered again. Default 500 ms. */
  readonly retryDelayMs?: number;
  /**
   * Messages of different keys one consumer handles at once on one partition (each key's still one
   * at a time, in order), so a long handler does not hold up the other keys behind it. Default 1.
   */
  readonly keyConcurrency?: number;
  /**
   * Minimum age of a message before the retention sweep may delete it. A message is deleted only
   * when it is this old AND every group that has committed on its topic has committed past it.
   * Default 7 days.
   */
  readonly retentionMs?: number;
  /** How often this instance runs the retention sweep; 0 turns the periodic sweep off. Default 5 minutes. */
  readonly retentionCheckMs?: number;
  /**
   * Told about handler rejections (the message is redelivered after `retryDelayMs`), failed consumer
   * rounds and failed retention sweeps; the adapter itself keeps going. Default: one line on stderr.
   */
  readonly onError?: (error: unknown, context: MessageLogErrorContext) => void;
}

/** The options with their defaults applied. */
export interface SqliteLogSettings {
  readonly pollIntervalMs: number;
  readonly leaseMs: number;
  readonly retryDelayMs: number;
  readonly keyConcurrency: number;
  readonly retentionMs: number;
  readonly retentionCheckMs: number;
}

export function logSettings(options: SqliteMessageLogOptions): SqliteLogSettings {
  return {
    pollIntervalMs: options.pollIntervalMs ?? 50,
    leaseMs: options.leaseMs ?? 10_000,
    retryDelayMs: options.retryDelayMs ?? 500,
    keyConcurrency: Math.max(1, Math.floor(options.keyConcurrency ?? 1)),
    retentionMs: options.retentionMs ?? 7 * 24 * 3600 * 1000,
    retentionCheckMs: options.retentionCheckMs ?? 5 * 60 * 1000,
  };
}

export function defaultOnError(error: unknown, context: MessageLogErrorContext): void {
  const where = context.message
    ? ` on ${context.message.topic}[${context.message.partition}]@${context.message.offset}`
    : '';
  const reason = error instanceof Error ? error.message : String(error);
  console.warn(`message log: ${context.phase} error in group ${context.groupId || '-'}${where}: ${reason}`);
}
