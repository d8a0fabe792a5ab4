import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { KbError } from '../../errors/kb-error.ts';
import { headersOf } from './kafka-consumer.ts';
import { kafkaError } from './kafka-errors.ts';
import type { KafkaLogSink } from './kafka-logging.ts';
import type { TopicSchemas } from './kafka-registry.ts';
import type { Subscription, TailOptions } from './message-log.port.ts';

interface TailDeps {
  readonly kafka: Kafka;
  readonly admin: Admin;
  readonly schemas: TopicSchemas;
  readonly logger: KafkaLogSink;
  readonly clientId: string;
  /** Called once the tail has disconnected, however it ended. */
  readonly onEnd: (tail: KafkaTail) => void;
}

export interface KafkaTail extends Subscription {
  /** Disconnects at once (the log is closing). */
  abandon(): Promise<void>;
}

/**
 * A tail on Kafka: a kafkajs consumer alone in a group of its own (a random id; kafkajs has no
 * group-less assignment), which never commits, seeked on every partition to the offset
 * `fetchTopicOffsetsByTimestamp` gives for `sinceMs` (or to the end). The group has no offsets, so
 * the broker forgets it once the tail leaves. Messages come one at a time; one that cannot be
 * decoded is logged and skipped. It is caught up once every partition's position reached the end
 * offset read at the start (a partition starting there at once, the others when a processed batch
 * ends at or past it).
 */
export async function startKafkaTail(deps: TailDeps, options: TailOptions): Promise<KafkaTail> {
  const { kafka, admin, schemas, logger } = deps;
  const { topic, sinceMs, handler, onEnd, onCaughtUp } = options;
  const groupId = `${deps.clientId}.tail.${randomUUID()}`;
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: 250,
    allowAutoTopicCreation: false,
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => !ended },
  });
  let ended = false;
  let disconnecting: Promise<void> | null = null;
  const disconnect = (): Promise<void> => {
    ended = true;
    disconnecting ??= consumer
      .disconnect()
      .catch(() => undefined)
      .finally(() => deps.onEnd(tail));
    return disconnecting;
  };
  const tail: KafkaTail = { stop: disconnect, abandon: disconnect };

  /** Partitions whose position has not yet reached the end read at the start, with that end. */
  const behind = new Map<number, bigint>();
  const reached = (partition: number, nextOffset: bigint) => {
    const end = behind.get(partition);
    if (end === undefined || nextOffset < end) return;
    behind.delete(partition);
    if (behind.size === 0) onCaughtUp?.();
  };

  try {
    const ends = await admin.fetchTopicOffsets(topic);
    const starts =
      sinceMs === undefined
        ? ends.map((p) => ({ partition: p.partition, offset: p.high }))
        : await admin.fetchTopicOffsetsByTimestamp(topic, sinceMs);
    if (onCaughtUp) {
      for (const end of ends) behind.set(end.partition, BigInt(end.high));
      consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
        if (!ended && event.payload.topic === topic)
          reached(event.payload.partition, BigInt(event.payload.lastOffset) + 1n);
      });
    }
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 1,
      eachMessage: async ({ partition, message }) => {
        if (ended) return;
        let value: Record<string, unknown>;
        try {
          value = await schemas.decode(message.value);
        } catch (error) {
          if (!(error instanceof KbError && error.code === 'invalid-event')) throw error;
          logger.error({ topic, partition, offset: message.offset, error: error.message }, 'tail skips a message');
          return;
        }
        try {
          await handler({
            topic,
            partition,
            offset: message.offset,
            key: message.key ? message.key.toString('utf8') : '',
            value,
            headers: headersOf(message.headers),
            timestamp: Number(message.timestamp),
          });
        } catch (error) {
          if (ended) return;
          void disconnect();
          onEnd?.(error);
        }
      },
    });
    for (const start of starts) consumer.seek({ topic, partition: start.partition, offset: String(start.offset) });
    // A partition with nothing between its start and its end is caught up already.
    if (onCaughtUp) for (const start of starts) reached(start.partition, BigInt(start.offset));
  } catch (error) {
    await disconnect();
    throw kafkaError(error, `tail topic ${topic}`);
  }
  consumer.on(consumer.events.CRASH, (event) => {
    if (ended || event.payload.restart) return;
    void disconnect();
    onEnd?.(event.payload.error);
  });
  return tail;
}
