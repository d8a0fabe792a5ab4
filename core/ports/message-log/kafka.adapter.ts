import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { engineUnavailable, KbError } from '../../errors/kb-error.ts';
import type { KafkaConsumerSettings, KafkaSubscription } from './kafka-consumer.ts';
import { startKafkaSubscription } from './kafka-consumer.ts';
import { KAFKA, kafkaError, kafkaErrorType, withTimeout } from './kafka-errors.ts';
import { type KafkaLogSink, quietLogCreator, stderrKafkaLogSink } from './kafka-logging.ts';
import { createCoalescingSender } from './kafka-producer.ts';
import { readRetainedKafka } from './kafka-read.ts';
import { createTopicSchemas, type SchemaCompatibility, type TopicSchema } from './kafka-registry.ts';
import { countKafkaRequests } from './kafka-request-count.ts';
import { type KafkaTail, startKafkaTail } from './kafka-tail.ts';
import type {
  MessageLog,
  MessageLogAdmin,
  MessageLogTail,
  OutgoingMessage,
  Subscription,
  TopicSpec,
} from './message-log.port.ts';

export type { SchemaCompatibility } from './kafka-registry.ts';

export interface KafkaMessageLogOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Confluent-compatible schema registry API, e.g. `http://127.0.0.1:8081` or Apicurio's `.../apis/ccompat/v7`. */
  readonly schemaRegistryUrl: string;
  /** Compatibility level `ensureTopics` sets on every subject. Default `BACKWARD`. */
  readonly compatibility?: SchemaCompatibility;
  /** Replication factor of topics `ensureTopics` creates. Default 1 (a single-broker cluster). */
  readonly replicationFactor?: number;
  /**
   * A group member that sends no heartbeat for this long is dropped and its partitions go to the
   * rest of the group (the time a crashed worker's partitions wait). Default 15 000 ms; the broker
   * accepts 6 000–1 800 000 by default.
   */
  readonly sessionTimeoutMs?: number;
  /** Default 3 000 ms; must be below the session timeout. */
  readonly heartbeatIntervalMs?: number;
  /**
   * How long a rebalance waits for members busy with a message to re-join (the whole group waits
   * meanwhile). A member still busy after that is dropped from the group; its message is delivered
   * again to the partition's new owner. Default 60 000 ms.
   */
  readonly rebalanceTimeoutMs?: number;
  /**
   * Longest broker-side wait of one fetch while fewer than `minFetchBytes` are new (also bounds how
   * long `stop()` waits for an idle fetch, and how long an event waits at each stage when little
   * else is flowing). Default 1 000 ms.
   */
  readonly maxWaitTimeMs?: number;
  /**
   * Bytes a fetch waits for (up to `maxWaitTimeMs`) before the broker answers. A consumer fetches
   * again as soon as it has taken a batch, so with 1 every fetch would carry an event or two while
   * events trickle in; a few kilobytes (a dozen stage events) let one fetch carry several, at the
   * cost of up to `maxWaitTimeMs` more per stage while little is flowing. Default 1.
   */
  readonly minFetchBytes?: number;
  /**
   * Partitions one subscription fetches for at the same time; the handlers of a subscription
   * running at once are at most this × `keysConsumedConcurrently`. Default 4.
   */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * Keys (documents) of one partition handled at the same time; each key's messages stay in order,
   * one at a time. Default 4; 1 handles a partition one message at a time.
   */
  readonly keysConsumedConcurrently?: number;
  /** Pause before a message whose handler rejected is delivered again. Default 500 ms. */
  readonly retryDelayMs?: number;
  /**
   * How long a subscription gathers the offsets of handled messages before it commits them all in
   * one request (`stop()` and a rebalance commit at once). A crashed member's partitions are
   * delivered again from the last commit, so up to this much handled work is redone. 0 commits
   * each run of handled messages at once. Default 200 ms.
   */
  readonly commitIntervalMs?: number;
  /**
   * How long a handler may run: one still running after it is given up as if it had rejected, and
   * its message is delivered again (like Kafka's `max.poll.interval.ms`; the first call may still
   * be running). Default 300 000 ms.
   */
  readonly maxHandlerMs?: number;
  /** Timeout of one Kafka request. Default 30 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Timeout of establishing a broker connection. Default 3 000 ms. */
  readonly connectionTimeoutMs?: number;
  /** Timeout of one schema-registry call. Default 10 000 ms. */
  readonly registryTimeoutMs?: number;
  /** Timeout of `ping()`. Default 5 000 ms. */
  readonly pingTimeoutMs?: number;
  /** Receives the adapter's and kafkajs's warnings and errors. Default: one line each on stderr. */
  readonly logger?: KafkaLogSink;
}

/** Retries of one Kafka call: it gives up after roughly 6 s of failures, so callers see an outage as `engine-unavailable`. */
const KAFKA_RETRY = { retries: 5, initialRetryTime: 200, maxRetryTime: 5_000 } as const;

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1) {
    throw new KbError('config-invalid', `Kafka message log option ${name} must be a positive whole number`);
  }
  return chosen;
}

/** A connect step shared by every caller; a failed attempt is forgotten so the next call tries again. */
function lazy(connect: () => Promise<void>): () => Promise<void> {
  let pending: Promise<void> | null = null;
  return () => {
    if (!pending) {
      pending = connect().catch((error: unknown) => {
        pending = null;
        throw error;
      });
    }
    return pending;
  };
}

/**
 * The message log on Kafka (kafkajs) with Avro values in a Confluent-compatible schema registry.
 *
 * - `ensureTopics` registers each topic's schema as subject `<topic>-value` with the configured
 *   compatibility (BACKWARD by default; an incompatible schema rejects with a non-retriable
 *   `conflict`), then creates missing topics with their partition count and `replicationFactor`.
 *   It resolves once the new topics' partitions answer an offsets read (their leaders serve).
 *   An existing topic keeps its partition count even when fewer than requested (adding partitions
 *   would move keys to other partitions and break per-key order for messages in flight); a
 *   warning is logged instead.
 * - `publish` finds the topic's schema (the one registered by this process, else the subject's
 *   latest version; `not-found` without a subject), validates every value with avsc first (one
 *   invalid value rejects the whole call with `invalid-event`, nothing is sent), encodes them in the
 *   Confluent wire format and sends them keyed by `key` (murmur2 default partitioner, so a key
 *   stays on one partition) with an idempotent producer and `acks: -1`; it resolves once the
 *   broker acknowledged every message. Concurrent calls share produce requests: one made while a
 *   send is in flight goes out with the others made meanwhile (`kafka-producer.ts`), since the
 *   idempotent producer sends one request at a time per broker.
 * - `subscribe` runs one kafkajs consumer per subscription in the group; see
 *   {@link startKafkaSubscription} for commits and redelivery. A consumer that dies without
 *   leaving stops heartbeating; the broker drops it after `sessionTimeoutMs` and the rest of the
 *   group takes its partitions over from their committed offsets. Messages that cannot be decoded
 *   (not written through the registry, unknown schema id) are logged and skipped.
 * - `lag` compares the group's committed offsets with the partitions' end offsets (a partition
 *   the group has not committed on counts from its earliest retained offset).
 * - `tail` reads a topic in a consumer group of its own that never commits (see `kafka-tail.ts`);
 *   joining it takes a group round trip, so a tail starts within about a second. `readRetained`
 *   reads a topic whole the same way (`kafka-read.ts`), and joins no group for an empty topic.
 * - `deleteTopics` deletes the topics and their subjects.
 * - `ping` checks both the broker (describeCluster) and the registry.
 * - `close()` leaves every group at once, without waiting for handlers in flight: their messages
 *   stay uncommitted and are delivered again to the group. Call `stop()` on subscriptions first
 *   for a graceful shutdown.
 * - An unreachable or unresponsive broker or registry rejects with retriable `engine-unavailable`.
 */
export async function createKafkaMessageLog(
  options: KafkaMessageLogOptions,
): Promise<MessageLog & MessageLogAdmin & MessageLogTail> {
  if (options.brokers.length === 0)
    throw new KbError('config-invalid', 'The Kafka message log needs at least one broker');
  if (!options.schemaRegistryUrl)
    throw new KbError('config-invalid', 'The Kafka message log needs a schema registry URL');
  const logger = options.logger ?? stderrKafkaLogSink;
  const replicationFactor = positiveInteger(options.replicationFactor, 1, 'replicationFactor');
  const pingTimeoutMs = positiveInteger(options.pingTimeoutMs, 5_000, 'pingTimeoutMs');
  const settings: KafkaConsumerSettings = {
    sessionTimeoutMs: positiveInteger(options.sessionTimeoutMs, 15_000, 'sessionTimeoutMs'),
    heartbeatIntervalMs: positiveInteger(options.heartbeatIntervalMs, 3_000, 'heartbeatIntervalMs'),
    rebalanceTimeoutMs: positiveInteger(options.rebalanceTimeoutMs, 60_000, 'rebalanceTimeoutMs'),
    maxWaitTimeMs: positiveInteger(options.maxWaitTimeMs, 1_000, 'maxWaitTimeMs'),
    minFetchBytes: positiveInteger(options.minFetchBytes, 1, 'minFetchBytes'),
    partitionsConsumedConcurrently: positiveInteger(
      options.partitionsConsumedConcurrently,
      4,
      'partitionsConsumedConcurrently',
    ),
    keysConsumedConcurrently: positiveInteger(options.keysConsumedConcurrently, 4, 'keysConsumedConcurrently'),
    retryDelayMs: positiveInteger(options.retryDelayMs, 500, 'retryDelayMs'),
    maxHandlerMs: positiveInteger(options.maxHandlerMs, 300_000, 'maxHandlerMs'),
    commitIntervalMs:
      options.commitIntervalMs === 0 ? 0 : positiveInteger(options.commitIntervalMs, 200, 'commitIntervalMs'),
  };
  if (settings.heartbeatIntervalMs >= settings.sessionTimeoutMs) {
    throw new KbError('config-invalid', 'The Kafka heartbeat interval must be shorter than the session timeout');
  }

  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: positiveInteger(options.connectionTimeoutMs, 3_000, 'connectionTimeoutMs'),
    requestTimeout: positiveInteger(options.requestTimeoutMs, 30_000, 'requestTimeoutMs'),
    retry: KAFKA_RETRY,
    logLevel: logLevel.WARN,
    logCreator: quietLogCreator(logger),
  });
  const schemas = createTopicSchemas({
    url: options.schemaRegistryUrl,
    compatibility: options.compatibility ?? 'BACKWARD',
    requestTimeoutMs: positiveInteger(options.registryTimeoutMs, 10_000, 'registryTimeoutMs'),
    clientId: options.clientId,
  });
  const admin = kafka.admin({ retry: KAFKA_RETRY });
  const producer = kafka.producer({
    idempotent: true,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    // Bounded so that `publish` reports an unreachable broker instead of retrying forever.
    retry: KAFKA_RETRY,
  });
  countKafkaRequests({ kind: 'admin', admin });
  countKafkaRequests({ kind: 'producer', producer });
  const send = createCoalescingSender(async (topicMessages) => {
    await producer.sendBatch({ topicMessages, acks: -1 });
  });
  const connectAdmin = lazy(() => admin.connect());
  const connectProducer = lazy(() => producer.connect());
  const subscriptions = new Set<KafkaSubscription>();
  const tails = new Set<KafkaTail>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new KbError('service-unavailable', 'The message log is closed');
  }

  async function adminCall<T>(action: string, call: () => Promise<T>): Promise<T> {
    try {
      await connectAdmin();
      return await call();
    } catch (error) {
      throw kafkaError(error, action);
    }
  }

  /** Waits (up to 10 s) until the partitions of a new topic answer an offsets read. */
  async function untilServed(topic: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await admin.fetchTopicOffsets(topic);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw kafkaError(error, `wait for the partitions of topic ${topic}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  function validate(topic: string, schema: TopicSchema, messages: readonly OutgoingMessage[]): void {
    for (const [index, message] of messages.entries()) {
      if (typeof message.key !== 'string') {
        throw new KbError('invalid-event', `Message ${index} for topic ${topic} has no string key`);
      }
      for (const [name, value] of Object.entries(message.headers ?? {})) {
        if (typeof value !== 'string') {
          throw new KbError('invalid-event', `Header ${name} of message ${index} for topic ${topic} is not a string`);
        }
      }
      const paths: string[] = [];
      const valid = schema.type.isValid(message.value, {
        errorHook: (fieldPath: string[]) => paths.push(fieldPath.join('.') || '(value)'),
      });
      if (!valid) {
        throw new KbError(
          'invalid-event',
          `Message ${index} (key ${message.key}) does not match the schema of topic ${topic}; invalid: ${paths.join(', ')}`,
        );
      }
    }
  }

  const log: MessageLog & MessageLogAdmin & MessageLogTail = {
    kind: 'Kafka',

    async ensureTopics(specs) {
      assertOpen();
      const byName = new Map<string, TopicSpec>();
      for (const spec of specs) {
        if (!spec.name || !Number.isInteger(spec.partitions) || spec.partitions < 1) {
          throw new KbError('bad-request', `Topic ${spec.name} needs a name and a positive whole number of partitions`);
        }
        byName.set(spec.name, spec);
      }
      if (byName.size === 0) return;
      // Schemas first: a topic never exists without its subject, and an incompatible schema creates nothing.
      for (const spec of byName.values()) await schemas.register(spec.name, spec.schema);
      const existing = new Set(await adminCall('list topics', () => admin.listTopics()));
      const missing = [...byName.values()].filter((spec) => !existing.has(spec.name));
      if (missing.length > 0) {
        await adminCall(`create topics ${missing.map((s) => s.name).join(', ')}`, () =>
          admin.createTopics({
            waitForLeaders: true,
            topics: missing.map((spec) => ({
              topic: spec.name,
              numPartitions: spec.partitions,
              replicationFactor,
            })),
          }),
        );
        // `waitForLeaders` waits for the metadata, not for the leaders to serve: right after it
        // a read of the partitions' offsets can still answer "not the leader". Resolve only once
        // every new topic answers one, so the first lag read or fetch does not fail.
        for (const spec of missing) await untilServed(spec.name);
      }
      const present = [...byName.values()].filter((spec) => existing.has(spec.name));
      if (present.length > 0) {
        const metadata = await adminCall('read topic metadata', () =>
          admin.fetchTopicMetadata({ topics: present.map((s) => s.name) }),
        );
        for (const topic of metadata.topics) {
          const wanted = byName.get(topic.name)?.partitions ?? 0;
          if (topic.partitions.length < wanted) {
            logger.warn(
              { topic: topic.name, partitions: topic.partitions.length, requested: wanted },
              'topic exists with fewer partitions than requested; keeping them (adding partitions would reorder keys)',
            );
          }
        }
      }
    },

    async publish(topic, messages) {
      assertOpen();
      if (messages.length === 0) return;
      const schema = await schemas.forTopic(topic);
      validate(topic, schema, messages);
      const values = await Promise.all(messages.map((message) => schemas.encode(schema, message.value)));
      try {
        await connectProducer();
        await send(
          topic,
          messages.map((message, index) => ({
            key: message.key,
            value: values[index] ?? null,
            headers: { ...message.headers },
          })),
        );
      } catch (error) {
        const mapped = kafkaError(error, `publish to topic ${topic}`);
        if (mapped.code !== 'not-found') throw mapped;
        // A broker that is restarting answers "unknown topic or partition" for topics it has not
        // loaded yet: only a topic the cluster does not list is missing for good.
        const listed = await adminCall('list topics', () => admin.listTopics()).catch((listing: unknown) => {
          throw listing instanceof KbError ? listing : mapped;
        });
        if (!listed.includes(topic)) throw mapped;
        throw engineUnavailable(KAFKA, `Kafka does not serve topic ${topic} yet (a broker is starting)`, error);
      }
    },

    async subscribe(subscribeOptions) {
      assertOpen();
      if (!subscribeOptions.groupId) throw new KbError('bad-request', 'A subscription needs a consumer group id');
      if (subscribeOptions.topics.length === 0) throw new KbError('bad-request', 'A subscription needs topics');
      const existing = new Set(await adminCall('list topics', () => admin.listTopics()));
      const unknown = subscribeOptions.topics.filter((topic) => !existing.has(topic));
      if (unknown.length > 0) throw new KbError('not-found', `Topic ${unknown.join(', ')} does not exist`);
      const subscription = await startKafkaSubscription(
        { kafka, schemas, settings, logger, onEnd: (ended) => subscriptions.delete(ended) },
        subscribeOptions,
      );
      subscriptions.add(subscription);
      if (closed) {
        await subscription.abandon();
        assertOpen();
      }
      const handle: Subscription = { stop: () => subscription.stop() };
      return handle;
    },

    async tail(tailOptions) {
      assertOpen();
      await connectAdmin().catch((error: unknown) => {
        throw kafkaError(error, `tail topic ${tailOptions.topic}`);
      });
      const started = await startKafkaTail(
        { kafka, admin, schemas, logger, clientId: options.clientId, onEnd: (ended) => tails.delete(ended) },
        tailOptions,
      );
      tails.add(started);
      return { stop: () => started.stop() };
    },

    async lag(groupId, topic) {
      assertOpen();
      const [committed, ends] = await adminCall(`read the lag of group ${groupId} on ${topic}`, () =>
        Promise.all([admin.fetchOffsets({ groupId, topics: [topic] }), admin.fetchTopicOffsets(topic)]),
      );
      const partitions = committed.find((entry) => entry.topic === topic)?.partitions ?? [];
      const byPartition = new Map(partitions.map((p) => [p.partition, BigInt(p.offset)]));
      if (![...byPartition.values()].some((offset) => offset >= 0n)) return null;
      let lag = 0n;
      for (const end of ends) {
        const high = BigInt(end.high);
        const committedOffset = byPartition.get(end.partition) ?? -1n;
        const from = committedOffset >= 0n ? committedOffset : BigInt(end.low);
        if (high > from) lag += high - from;
      }
      return Number(lag);
    },

    async lagByPartition(groupId, topic) {
      assertOpen();
      const [committed, ends] = await adminCall(`read the lag of group ${groupId} on ${topic}`, () =>
        Promise.all([admin.fetchOffsets({ groupId, topics: [topic] }), admin.fetchTopicOffsets(topic)]),
      );
      const partitions = committed.find((entry) => entry.topic === topic)?.partitions ?? [];
      const byPartition = new Map(partitions.map((p) => [p.partition, BigInt(p.offset)]));
      return ends
        .map((end) => {
          const high = BigInt(end.high);
          const committedOffset = byPartition.get(end.partition) ?? -1n;
          const from = committedOffset >= 0n ? committedOffset : BigInt(end.low);
          return { partition: end.partition, lag: high > from ? Number(high - from) : 0 };
        })
        .sort((a, b) => a.partition - b.partition);
    },

    async readRetained(topic, readOptions = {}) {
      assertOpen();
      await connectAdmin().catch((error: unknown) => {
        throw kafkaError(error, `read topic ${topic}`);
      });
      return readRetainedKafka(
        { kafka, admin, schemas, logger, clientId: options.clientId },
        topic,
        readOptions.limit ?? 10_000,
      );
    },

    async deleteTopics(names) {
      assertOpen();
      const unique = [...new Set(names)];
      if (unique.length === 0) return;
      const existing = new Set(await adminCall('list topics', () => admin.listTopics()));
      const present = unique.filter((name) => existing.has(name));
      if (present.length > 0) {
        try {
          await connectAdmin();
          await admin.deleteTopics({ topics: present });
        } catch (error) {
          // Deleted meanwhile by someone else: that is the goal anyway.
          if (kafkaErrorType(error) !== 'UNKNOWN_TOPIC_OR_PARTITION') {
            throw kafkaError(error, `delete topics ${present.join(', ')}`);
          }
        }
      }
      for (const name of unique) await schemas.deleteSubject(name);
    },

    async ping() {
      assertOpen();
      await Promise.all([
        withTimeout(
          adminCall('describe the cluster', () => admin.describeCluster()),
          pingTimeoutMs,
          `Kafka (${options.brokers.join(', ')})`,
        ),
        schemas.ping(pingTimeoutMs),
      ]);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([
        ...[...subscriptions].map((subscription) => subscription.abandon()),
        ...[...tails].map((tail) => tail.abandon()),
      ]);
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
    },
  };
  return log;
}
