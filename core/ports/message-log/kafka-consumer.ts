import type { Consumer, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import { KbError } from '../../errors/kb-error.ts';
import { createFairShares, type FairShares } from '../../util/fair-shares.ts';
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
type Outcome = 'done' | 'failed' | 'abandoned';

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
 * One kafkajs consumer in group `options.groupId`, fed batch by batch (`eachBatch`): up to
 * `partitionsConsumedConcurrently` partitions at once and, within a partition's batch, up to
 * `keysConsumedConcurrently` keys at once, each key's messages one after another in offset order.
 * Offsets are committed explicitly (`autoCommit: false`): `offset + 1` of the last message of the
 * run of handled messages from the batch's start, so a commit never passes an unhandled message.
 * Commits are gathered for up to `commitIntervalMs` and sent as one request for every partition of
 * the subscription (a commit per message would cost the broker a request each); `stop()` and a
 * rebalance send what is gathered first, so only a crash redelivers handled messages. A
 * rejected handler commits nothing from itself on: no further message of the batch starts, the
 * partition is paused for `retryDelayMs` and seeked back to the first unhandled message, so it is
 * delivered again and no later message of its key runs first.
 */
export async function startKafkaSubscription(deps: Deps, options: SubscribeOptions): Promise<KafkaSubscription> {
  const { kafka, schemas, settings, logger } = deps;
  const { groupId } = options;
  const topics = [...options.topics];
  let state: State = 'running';
  /** Fair turns among the shares of each partition's waiting messages (`options.shareOf`). */
  const partitionShares = new Map<string, FairShares>();
  const sharesOf = (topic: string, partition: number): FairShares => {
    const key = `${topic}\u0000${partition}`;
    let found = partitionShares.get(key);
    if (!found) {
      found = createFairShares();
      partitionShares.set(key, found);
    }
    return found;
  };
  const inFlight = new Set<Promise<void>>();
  const resumeTimers = new Set<NodeJS.Timeout>();
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

  /** Delivers the partition's message at `offset` again after a pause, moving past nothing. */
  function redeliverLater(topic: string, partition: number, offset: string): void {
    try {
      consumer.pause([{ topic, partitions: [partition] }]);
      consumer.seek({ topic, partition, offset });
    } catch (error) {
      logger.error({ groupId, topic, partition, offset, error: String(error) }, 'could not rewind a partition');
      return;
    }
    const timer = setTimeout(() => {
      resumeTimers.delete(timer);
      if (state !== 'running') return;
      try {
        consumer.resume([{ topic, partitions: [partition] }]);
      } catch {
        // The consumer is leaving; the group redelivers from the committed offset.
      }
    }, settings.retryDelayMs);
    resumeTimers.add(timer);
  }

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

  /** Runs the handler, keeping the membership alive while it works (up to `maxHandlerMs`). */
  async function runHandler(message: DeliveredMessage, heartbeat: () => Promise<void>): Promise<Outcome> {
    const started = Date.now();
    const beat = setInterval(() => {
      if (state === 'abandoned' || Date.now() - started > settings.maxHandlerMs) return;
      heartbeat().catch(() => undefined); // A rebalance shows up here; the runner re-joins after this message.
    }, settings.heartbeatIntervalMs);
    // One promise per handler (not one shared one), so finished handlers leave nothing behind.
    let release: () => void = () => undefined;
    const abandoned = new Promise<'abandoned'>((resolve) => {
      release = () => resolve('abandoned');
    });
    abandonHooks.add(release);
    if (state === 'abandoned') release();
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
      return await Promise.race([handled, abandoned]);
    } finally {
      abandonHooks.delete(release);
      clearInterval(beat);
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

  /**
   * Handles one fetched batch of a partition: messages are grouped by key, up to
   * `keysConsumedConcurrently` keys run at once, and each key's messages run one after another in
   * offset order. Offsets are committed as the run of handled messages from the batch's start
   * grows, so a commit never passes a message that is not handled. When a handler rejects, no
   * further message of the batch starts; once those in flight settle, the partition is rewound to
   * the first unhandled message and paused for `retryDelayMs` (messages of other keys after it that
   * did finish are delivered again: at-least-once).
   */
  async function handleBatch({ batch, heartbeat, isRunning, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    const handled = new Array<boolean>(messages.length).fill(false);
    let halted = false;
    const proceed = () => state === 'running' && !halted && isRunning() && !isStale();

    // Commits follow the run of handled messages from the batch's start.
    let prefix = -1; // the last index of that run
    const advance = () => {
      const before = prefix;
      while (prefix + 1 < messages.length && handled[prefix + 1]) prefix++;
      if (prefix === before) return;
      const offset = (messages[prefix] as KafkaMessage).offset;
      resolveOffset(offset);
      commitLater(topic, partition, offset);
    };

    // Each key's messages, in offset order; a lane is worked by one runner at a time.
    const byKey = new Map<string, { indices: number[]; next: number; busy: boolean }>();
    messages.forEach((message, index) => {
      const key = message.key ? message.key.toString('utf8') : '';
      const lane = byKey.get(key);
      if (lane) lane.indices.push(index);
      else byKey.set(key, { indices: [index], next: 0, busy: false });
    });
    const lanes = [...byKey.values()];
    const decoded = new Map<number, Promise<DeliveredMessage | null>>();
    /** Messages whose decoding finished, so a share can be read without waiting. */
    const settled = new Map<number, DeliveredMessage | null>();
    const decodeAt = (index: number) => {
      let found = decoded.get(index);
      if (!found) {
        found = decode(topic, partition, messages[index] as KafkaMessage).then((message) => {
          settled.set(index, message);
          return message;
        });
        decoded.set(index, found);
      }
      return found;
    };
    const shareOf = options.shareOf;
    const shares = sharesOf(topic, partition);
    const free = () => lanes.filter((lane) => !lane.busy && lane.next < lane.indices.length);
    const head = (lane: (typeof lanes)[number]) => lane.indices[lane.next] as number;
    /** The next lane to work: the first free one, or with `shareOf` the least-served share's first. */
    const takeLane = async () => {
      if (!shareOf) return free()[0];
      for (;;) {
        const heads = free().map(head);
        if (heads.length === 0) return undefined;
        await Promise.all(heads.map(decodeAt));
        // Chosen without awaiting, among the lanes still free whose head is decoded.
        const candidates = free()
          .filter((lane) => settled.has(head(lane)))
          .map((lane) => {
            const message = settled.get(head(lane));
            return { lane, index: head(lane), share: message ? shareOf(message) : '' };
          })
          .sort((a, b) => a.index - b.index);
        if (candidates.length > 0) return shares.pick(candidates, (c) => c.share)?.lane;
      }
    };
    const runLanes = async () => {
      for (;;) {
        if (!proceed()) return;
        let lane: (typeof lanes)[number] | undefined;
        try {
          lane = await takeLane();
        } catch {
          halted = true; // The registry is unreachable: try again after the pause.
          return;
        }
        if (!lane) return;
        // Another runner took it between the choice and now: choose again.
        if (lane.busy) continue;
        lane.busy = true;
        try {
          // Without shares a runner keeps its lane to the end; with them it takes one message a turn.
          do {
            if (!proceed()) return;
            const index = lane.indices[lane.next] as number;
            let delivered: DeliveredMessage | null;
            try {
              delivered = await decodeAt(index);
            } catch {
              halted = true; // The registry is unreachable: try again after the pause.
              return;
            }
            if (delivered) {
              if (!proceed()) return;
              const started = performance.now();
              const outcome = await runHandler(delivered, heartbeat);
              if (shareOf) shares.charge(shareOf(delivered), performance.now() - started);
              if (outcome !== 'done') {
                halted = true;
                return;
              }
            }
            handled[index] = true;
            lane.next += 1;
            advance();
          } while (!shareOf && lane.next < lane.indices.length);
        } finally {
          lane.busy = false;
        }
      }
    };
    const width = Math.min(settings.keysConsumedConcurrently, lanes.length);
    const lanesDone = await Promise.allSettled(Array.from({ length: width }, runLanes));
    const crashed = lanesDone.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (crashed) throw crashed.reason;
    const firstUnhandled = messages[prefix + 1];
    if (firstUnhandled && halted && state === 'running' && isRunning() && !isStale()) {
      redeliverLater(topic, partition, firstUnhandled.offset);
    }
  }

  let ended = false;
  async function leave(): Promise<void> {
    for (const timer of resumeTimers) clearTimeout(timer);
    resumeTimers.clear();
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
          await Promise.allSettled([...inFlight]);
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

  try {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => {
        const work = handleBatch(payload);
        inFlight.add(work);
        return work.finally(() => inFlight.delete(work));
      },
    });
  } catch (error) {
    state = 'abandoned';
    await leave().catch(() => undefined);
    throw kafkaError(error, `join consumer group ${groupId} on ${topics.join(', ')}`);
  }
  return subscription;
}
