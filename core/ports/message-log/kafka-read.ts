import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { KbError } from '../../errors/kb-error.ts';
import { headersOf } from './kafka-consumer.ts';
import { KAFKA, kafkaError, withTimeout } from './kafka-errors.ts';
import type { KafkaLogSink } from './kafka-logging.ts';
import type { TopicSchemas } from './kafka-registry.ts';
import type { DeliveredMessage } from './message-log.port.ts';

interface ReadDeps {
  readonly kafka: Kafka;
  readonly admin: Admin;
  readonly schemas: TopicSchemas;
  readonly logger: KafkaLogSink;
  readonly clientId: string;
}

/** How long reading a topic whole may take before it fails with `engine-unavailable`. */
const READ_TIMEOUT_MS = 30_000;

interface Range {
  readonly from: bigint;
  readonly end: bigint;
  readonly messages: DeliveredMessage[];
}

/**
 * `MessageLogAdmin.readRetained` on Kafka: the partitions' offsets are read first (what "retained
 * when called" means), then a kafkajs consumer alone in a group of its own (a random id, never
 * committed, so the broker forgets it) is seeked to each partition's start and reads until every
 * partition reached the end read first. A topic with nothing retained needs no consumer at all.
 * Messages that cannot be decoded are logged and left out.
 */
export async function readRetainedKafka(deps: ReadDeps, topic: string, limit: number): Promise<DeliveredMessage[]> {
  const { kafka, admin, schemas, logger } = deps;
  const existing = await admin.listTopics().catch((error: unknown) => {
    throw kafkaError(error, 'list topics');
  });
  if (!existing.includes(topic)) throw new KbError('not-found', `Topic ${topic} does not exist`);
  const offsets = await admin.fetchTopicOffsets(topic).catch((error: unknown) => {
    throw kafkaError(error, `read the offsets of topic ${topic}`);
  });
  const ranges = new Map<number, Range>();
  for (const p of offsets) {
    const end = BigInt(p.high);
    const low = BigInt(p.low);
    const from = end - BigInt(limit) > low ? end - BigInt(limit) : low;
    if (end > from) ranges.set(p.partition, { from, end, messages: [] });
  }
  if (ranges.size === 0) return [];

  const consumer = kafka.consumer({
    groupId: `${deps.clientId}.read.${randomUUID()}`,
    maxWaitTimeInMs: 250,
    allowAutoTopicCreation: false,
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => false },
  });
  const pending = new Set(ranges.keys());
  let finish: () => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  consumer.on(consumer.events.CRASH, (event) => fail(event.payload.error));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({ batch }) => {
        const range = ranges.get(batch.partition);
        if (!range || !pending.has(batch.partition)) return;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset < range.from || offset >= range.end) continue;
          let value: Record<string, unknown>;
          try {
            value = await schemas.decode(message.value);
          } catch (error) {
            if (!(error instanceof KbError && error.code === 'invalid-event')) throw error;
            logger.error(
              { topic, partition: batch.partition, offset: message.offset },
              'skipping an undecodable message',
            );
            continue;
          }
          range.messages.push({
            topic,
            partition: batch.partition,
            offset: message.offset,
            key: message.key ? message.key.toString('utf8') : '',
            value,
            headers: headersOf(message.headers),
            timestamp: Number(message.timestamp),
          });
        }
        // Reached the end read first (offsets may skip, so by the batch's last offset, not by count).
        if (BigInt(batch.lastOffset()) + 1n >= range.end) {
          pending.delete(batch.partition);
          if (pending.size === 0) finish();
        }
      },
    });
    for (const [partition, range] of ranges) consumer.seek({ topic, partition, offset: range.from.toString() });
    await withTimeout(finished, READ_TIMEOUT_MS, `Kafka (reading topic ${topic} whole)`, KAFKA);
  } catch (error) {
    throw kafkaError(error, `read topic ${topic}`);
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  return [...ranges.entries()].sort(([a], [b]) => a - b).flatMap(([, range]) => range.messages);
}
