import { type LogEntry, type logCreator, logLevel } from 'kafkajs';

/** Where the Kafka message log reports warnings and errors (a pino logger fits). */
export interface KafkaLogSink {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Writes one line per entry to stderr. */
export const stderrKafkaLogSink: KafkaLogSink = {
  warn(obj, msg) {
    console.warn(`[kafka] warn ${msg ?? ''} ${JSON.stringify(obj)}`);
  },
  error(obj, msg) {
    console.error(`[kafka] error ${msg ?? ''} ${JSON.stringify(obj)}`);
  },
};

/**
 * kafkajs messages that describe the normal life of a consumer group or a setting chosen on
 * purpose; they are dropped rather than reported as warnings.
 */
const ROUTINE = [
  /^The group is rebalancing, re-joining/,
  /^Limiting retries for the idempotent producer/,
  /^KafkaJS v2\.0\.0 switched default partitioner/,
];

const REBALANCE_RESPONSE = /The group is rebalancing, so a rejoin is needed/;

/**
 * Responses kafkajs retries by itself while a partition's leadership settles (right after a
 * topic is created, or while a broker restarts); a call that still fails after its retries
 * throws, and that error is reported where it is caught.
 */
const LEADERSHIP_RESPONSE = /not the leader for that topic-partition|no leader for this topic-partition/;

/** Fields of a kafkajs log entry worth keeping (never the whole entry: it can carry payloads). */
const KEPT_FIELDS = [
  'groupId',
  'memberId',
  'topic',
  'partition',
  'offset',
  'broker',
  'error',
  'retryCount',
  'retryTime',
];

/**
 * A kafkajs `logCreator` that forwards only warnings and errors to `sink`, minus routine
 * rebalance chatter. Use it with `logLevel: logLevel.WARN`.
 */
export function quietLogCreator(sink: KafkaLogSink): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      if (level !== logLevel.ERROR && level !== logLevel.WARN) return;
      const message = String(log.message ?? '');
      const extra = log as unknown as Record<string, unknown>;
      if (ROUTINE.some((pattern) => pattern.test(message))) return;
      // Responses that ask a member to re-join are how a rebalance starts, not failures.
      if (REBALANCE_RESPONSE.test(String(extra.error ?? ''))) return;
      if (LEADERSHIP_RESPONSE.test(String(extra.error ?? ''))) return;
      const fields: Record<string, unknown> = { component: 'kafkajs', namespace };
      for (const key of KEPT_FIELDS) if (extra[key] !== undefined) fields[key] = extra[key];
      if (level === logLevel.ERROR) sink.error(fields, message);
      else sink.warn(fields, message);
    };
}
