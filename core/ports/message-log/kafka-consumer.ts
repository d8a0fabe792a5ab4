import type { Consumer, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { KbError } from '../../errors/kb-error.ts';
import { createKafkaDispatcher, type HandlerOutcome } from './kafka-dispatcher.ts';
import { kafkaError } from './kafka-errors.ts';
import type { KafkaLogSink } from './kafka-logging.ts';
import type { TopicSchemas } from './kafka-registry.ts';
import { countKafkaRequests } from './kafka-request-count.ts';
import type { DeliveredMessage, SubscribeOptions, Subscription } from './message-log.port.ts';

/** Consumer-group settings of one subscription (see `KafkaMessageLogOptions` for their meaning). */
export interface KafkaConsumerSettings {
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly maxWaitTimeMs: number;
  readonly minFetchBytes: number;
  readonly partitionsConsumedConcurrently: number;
  readonly keysConsumedConcurrently: number;
  readonly retryDelayMs: number;
  readonly maxHandlerMs: number;
  readonly commitIntervalMs: number;
}

/** A subscription the log can also drop without waiting for its handlers (`MessageLog.close`). */
export interface KafkaSubscription extends Subscription {
  /** Leaves the group at once: handlers still running are abandoned uncommitted (redelivered to the group). */
  abandon(): Promise<void>;
}

interface Deps {
  readonly kafka: Kafka;
  readonly schemas: TopicSchemas;
  readonly settings: KafkaConsumerSettings;
  readonly logger: KafkaLogSink;
  /** Called once the subscription has left its group, however it ended. */
  readonly onEnd: (subscription: KafkaSubscription) => void;
}

type State = 'running' | 'stopping' | 'abandoned';
/**
 * Fetched messages one partition may hold waiting before its fetching pauses. Stage events are
 * small (ids and counts), so this is well under a megabyte a partition.
 */
const MAX_WAITING_PER_PARTITION = 512;

function headerText(value: IHeaders[string]): string | null {
  if (value === undefined) return null;
  const last = Array.isArray(value) ? value.at(-1) : value;
  if (last === undefined) return null;
  return Buffer.isBuffer(last) ? last.toString('utf8') : String(last);
}

export function headersOf(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const text = headerText(value);
    if (text !== null) out[name] = text;
  }
  return out;
}

/**
 * One kafkajs consumer in group `options.groupId`. Fetched batches are handed to a dispatcher
 * (`kafka-dispatcher.ts`) and the consumer fetches on at once, so a slow batch of one partition
 * holds back neither the next batch of its partition nor the other partitions: messages of one key
 * run one after another in offset order, up to `keysConsumedConcurrently` keys of a partition and
 * `partitionsConsumedConcurrently × keysConsumedConcurrently` messages in all run at once, and with
 * `shareOf` the next message started is chosen in fair turns among shares over every partition.
 * Offsets are committed explicitly (`autoCommit: false`): `offset + 1` of the last message of the
 * run of handled messages from the partition's last commit, so a commit never passes an unhandled
 * message. Commits are gathered for up to `commitIntervalMs` and sent as one request for every
 * partition of the subscription (a commit per message would cost the broker a request each);
 * `stop()` and a rebalance send what is gathered first, so only a crash redelivers handled
 * messages. A rejected handler commits nothing from itself on: nothing more starts on its
 * partition, which is paused, rewound to the first unhandled message once its running handlers
 * end, and fetched again after `retryDelayMs`, so no later message of its key runs first. A handler
 * still running after `maxHandlerMs` is given up as if it had rejected (its message is delivered
 * again, while the first call may still be running). At a rebalance, partitions that move to
 * another member stop starting messages at once; a message already running there may run again at
 * the new owner meanwhile (at-least-once).
 */
export async function startKafkaSubscription(deps: Deps, options: SubscribeOptions): Promise<KafkaSubscription> {
  const { kafka, schemas, settings, logger } = deps;
  const { groupId } = options;
  const topics = [...options.topics];
  let state: State = 'running';
  /** Releases of the handlers in flight, called when the subscription is abandoned. */
  const abandonHooks = new Set<() => void>();
  const abandonHandlers = () => {
    for (const release of abandonHooks) release();
    abandonHooks.clear();
  };

  const consumer: Consumer = kafka.consumer({
    groupId,
    sessionTimeout: settings.sessionTimeoutMs,
    heartbeatInterval: settings.heartbeatIntervalMs,
    rebalanceTimeout: settings.rebalanceTimeoutMs,
    maxWaitTimeInMs: settings.maxWaitTimeMs,
    minBytes: settings.minFetchBytes,
    allowAutoTopicCreation: false,
    retry: {
      retries: 5,
      initialRetryTime: 300,
      maxRetryTime: 10_000,
      restartOnFailure: async (error) => {
        logger.error({ groupId, error: error.message }, 'Kafka consumer crashed; restarting it');
        return state === 'running';
      },
    },
  });

  countKafkaRequests({ kind: 'consumer', consumer });

  /**
   * Offsets to commit (`offset + 1` of the last handled message of each run), by partition, gathered
   * until the next flush. Committing later only widens what a crash redelivers: the consumer has
   * resolved these offsets, so it fetches on from them meanwhile.
   */
  const gathered = new Map<string, { topic: string; partition: number; offset: string }>();
  let commitTimer: NodeJS.Timeout | null = null;
  let committing: Promise<void> = Promise.resolve();

  /** Commits what is gathered, in one request; resolves once it and every earlier commit settled. */
  function flushCommits(): Promise<void> {
    if (commitTimer !== null) {
      clearTimeout(commitTimer);
      commitTimer = null;
    }
    if (gathered.size === 0) return committing;
    const offsets = [...gathered.values()];
    gathered.clear();
    committing = committing.then(async () => {
      try {
        await consumer.commitOffsets(offsets);
      } catch (error) {
        // Typically the group moved on (rebalance, membership lost): the partitions' new owners
        // start from the last commit that succeeded, so these messages are delivered again.
        logger.warn(
          { groupId, offsets, error: (error as Error).message },
          'could not commit handled messages; they will be delivered again',
        );
      }
    });
    return committing;
  }

  /** Gathers the commit of `offset` (a handled message) for the next flush. */
  function commitLater(topic: string, partition: number, offset: string): void {
    gathered.set(`${topic}\u0000${partition}`, { topic, partition, offset: (BigInt(offset) + 1n).toString() });
    if (settings.commitIntervalMs === 0) {
      void flushCommits();
    } else if (commitTimer === null) {
      commitTimer = setTimeout(() => void flushCommits(), settings.commitIntervalMs);
    }
  }

  /** Runs the handler; gives it up when the subscription is abandoned or after `maxHandlerMs`. */
  async function runHandler(message: DeliveredMessage): Promise<HandlerOutcome> {
    // One promise per handler (not one shared one), so finished handlers leave nothing behind.
    let release: () => void = () => undefined;
    const abandoned = new Promise<'abandoned'>((resolve) => {
      release = () => resolve('abandoned');
    });
    abandonHooks.add(release);
    if (state === 'abandoned') release();
    let overdue: NodeJS.Timeout | undefined;
    const tooSlow = new Promise<'failed'>((resolve) => {
      overdue = setTimeout(() => {
        logger.error(
          { groupId, topic: message.topic, partition: message.partition, offset: message.offset },
          `message handler still running after ${settings.maxHandlerMs} ms; the message will be delivered again`,
        );
        resolve('failed');
      }, settings.maxHandlerMs);
    });
    try {
      const handled = Promise.resolve()
        .then(() => options.handler(message))
        .then(
          () => 'done' as const,
          (error: unknown) => {
            logger.warn(
              {
                groupId,
                topic: message.topic,
                partition: message.partition,
                offset: message.offset,
                error: error instanceof Error ? error.message : String(error),
              },
              'message handler rejected; the message will be delivered again',
            );
            return 'failed' as const;
          },
        );
      return await Promise.race([handled, abandoned, tooSlow]);
    } finally {
      abandonHooks.delete(release);
      clearTimeout(overdue);
    }
  }

  /** Decodes one fetched message; null when it can never be handled (logged, to be skipped). */
  async function decode(topic: string, partition: number, message: KafkaMessage): Promise<DeliveredMessage | null> {
    let value: Record<string, unknown>;
    try {
      value = await schemas.decode(message.value);
    } catch (error) {
      if (error instanceof KbError && error.code === 'invalid-event') {
        // Not written through a registry with a schema we can find: it can never be handled.
        logger.error(
          { groupId, topic, partition, offset: message.offset, error: error.message },
          'skipping a message that cannot be decoded',
        );
        return null;
      }
      throw error;
    }
    return {
      topic,
      partition,
      offset: message.offset,
      key: message.key ? message.key.toString('utf8') : '',
      value,
      headers: headersOf(message.headers),
      timestamp: Number(message.timestamp),
    };
  }

  const dispatcher = createKafkaDispatcher({
    decode,
    handle: runHandler,
    commit: commitLater,
    rewind(topic, partition, offset) {
      try {
        consumer.seek({ topic, partition, offset });
      } catch (error) {
        logger.error({ groupId, topic, partition, offset, error: String(error) }, 'could not rewind a partition');
      }
    },
    setPaused(topic, partition, paused) {
      try {
        if (paused) consumer.pause([{ topic, partitions: [partition] }]);
        else if (state === 'running') consumer.resume([{ topic, partitions: [partition] }]);
      } catch {
        // The consumer is leaving; the group redelivers from the committed offset.
      }
    },
    ...(options.shareOf ? { shareOf: options.shareOf } : {}),
    keysPerPartition: settings.keysConsumedConcurrently,
    maxRunning: settings.keysConsumedConcurrently * settings.partitionsConsumedConcurrently,
    retryDelayMs: settings.retryDelayMs,
    maxWaitingPerPartition: MAX_WAITING_PER_PARTITION,
  });

  /** Hands a fetched batch to the dispatcher and moves the fetch position past it. */
  async function takeBatch({ batch, isRunning, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    // A batch fetched before a rewind of its partition is delivered again from the rewound position.
    if (state !== 'running' || !isRunning() || isStale()) return;
    const last = batch.messages.at(-1);
    if (!last) return;
    if (dispatcher.accept(batch.topic, batch.partition, batch.messages)) resolveOffset(last.offset);
  }

  let ended = false;
  async function leave(): Promise<void> {
    try {
      await flushCommits();
      await consumer.disconnect();
    } finally {
      if (!ended) {
        ended = true;
        deps.onEnd(subscription);
      }
    }
  }

  let stopping: Promise<void> | null = null;
  const subscription: KafkaSubscription = {
    stop() {
      if (!stopping) {
        stopping = (async () => {
          if (state === 'running') state = 'stopping';
          try {
            consumer.pause(topics.map((topic) => ({ topic })));
          } catch {
            // Not running (never started or crashed): nothing to pause.
          }
          await dispatcher.close();
          await leave();
        })();
      }
      return stopping;
    },
    abandon() {
      state = 'abandoned';
      abandonHandlers();
      return subscription.stop();
    },
  };

  // Partitions may move to other members: commit what this member handled before they do.
  consumer.on(consumer.events.REBALANCING, () => {
    void flushCommits();
  });
  // After a re-join: forget the partitions that went to other members.
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assignment = payload.memberAssignment;
    dispatcher.retain((topic, partition) => assignment[topic]?.includes(partition) ?? false);
  });

  try {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
      eachBatchAutoResolve: false,
      eachBatch: takeBatch,
    });
  } catch (error) {
    state = 'abandoned';
    await leave().catch(() => undefined);
    throw kafkaError(error, `join consumer group ${groupId} on ${topics.join(', ')}`);
  }
  return subscription;
}
