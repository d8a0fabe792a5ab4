import type { EventSchema } from '../../events/event-schema.ts';

export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  /**
   * Every value published to the topic must match this schema; consumers get it decoded. Opaque to
   * the port: the events module owns its format (see `EventSchema`).
   */
  readonly schema: EventSchema;
}

export interface OutgoingMessage {
  /** Partitioning key: messages with the same key go to the same partition, in publish order. */
  readonly key: string;
  readonly value: Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface DeliveredMessage {
  readonly topic: string;
  readonly partition: number;
  /**
   * Position of the message within its partition. Opaque: record it or compare it for equality,
   * but do not parse it or compute with it (its form is the adapter's).
   */
  readonly offset: string;
  readonly key: string;
  readonly value: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
  /** When the message was appended, epoch milliseconds. */
  readonly timestamp: number;
}

export interface SubscribeOptions {
  /** Consumer group: every group receives every message; within a group each partition has one consumer at a time. */
  readonly groupId: string;
  readonly topics: readonly string[];
  /**
   * Called once per message. Calls for one key are sequential and in offset order; different keys
   * (on one partition or on different partitions) may be handled concurrently, up to the adapter's
   * bounds. A message's offset is committed only after its promise and those of every earlier
   * message of its partition resolved.
   */
  readonly handler: (message: DeliveredMessage) => Promise<void>;
  /** A new group starts at the earliest retained message (default) or only sees new ones. */
  readonly fromBeginning?: boolean;
  /**
   * The share a message belongs to (e.g. its tenant). When given, messages of one partition that
   * wait are not taken in offset order but share by share: the next message started is the
   * earliest one of the share whose handlers have taken the least time so far (a share that was
   * idle starts level with the busiest share waiting, not with its old credit), so one share's
   * backlog delays another's messages by at most the handler running when they arrive. Each
   * key's messages still run one after another in offset order, and offsets are still committed
   * only up to the first message not handled (a crash redelivers what was handled after it).
   */
  readonly shareOf?: (message: DeliveredMessage) => string;
}

export interface PartitionLag {
  readonly partition: number;
  /** Messages after the group's committed offset (or after the earliest retained one, uncommitted). */
  readonly lag: number;
}

export interface Subscription {
  /** Waits for in-flight handlers, commits their offsets and leaves the group. */
  stop(): Promise<void>;
}

/**
 * A partitioned, durable message log with consumer groups: every group receives every message of
 * its topics; within a group each partition has one consumer at a time.
 *
 * Contract:
 * - `ensureTopics` is idempotent; it records each topic's schema. Publishing a value that does
 *   not match the topic's schema rejects with `invalid-event` and appends nothing.
 * - `publish` resolves once every message is durable. Messages with the same key keep their
 *   publish order for every consumer.
 * - Delivery is at-least-once: a message whose handler has not resolved when its consumer stops,
 *   crashes or loses its partition is delivered again (to this or another group member).
 *   Handlers must therefore be idempotent.
 * - If a handler rejects, the adapter does not commit that message; it redelivers it after a short
 *   pause, never commits past it on that partition and handles no later message of its key first
 *   (messages of other keys after it may be delivered again too). Stages do their own retry and
 *   dead-lettering and only reject when they cannot record an outcome at all.
 * - Outside the contract: exactly-once, ordering across keys, transactions, message retention time.
 */
export interface MessageLog {
  /** The engine behind the log as readiness names it, e.g. `Kafka`. */
  readonly kind: string;
  ensureTopics(topics: readonly TopicSpec[]): Promise<void>;
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface TailOptions {
  readonly topic: string;
  /**
   * Start, on each partition, at the first message appended at or after this instant (epoch
   * milliseconds); absent, only messages appended from now on are read.
   */
  readonly sinceMs?: number;
  /** Called once per message, one call at a time; a rejection ends the tail. */
  readonly handler: (message: DeliveredMessage) => Promise<void>;
  /** Called once if the tail ends by itself (its handler rejected, or reading failed), with the error. */
  readonly onEnd?: (error: unknown) => void;
  /**
   * Called once, when every message appended before `tail` was called (from the tail's start on)
   * has been handled: what comes after was appended while the tail ran. Without `sinceMs` that is
   * at once (at the first read). A reader joining a live view from a past instant uses it to know
   * when the past is read.
   */
  readonly onCaughtUp?: () => void;
}

/**
 * Reading a topic outside any consumer group, for live views (the event stream): a tail sees
 * every message of every partition of its topic from its start on, in offset order within a
 * partition (partitions interleave in no stated order), commits nothing and holds nothing back
 * (retention ignores it). A message that retention removed before the tail reached it is not
 * delivered. `stop()` ends it without waiting for anything but the handler call in flight.
 * Outside the contract: positions before the oldest retained message, and how soon after its
 * publish a message reaches the tail (each adapter states its bound).
 */
export interface MessageLogTail {
  tail(options: TailOptions): Promise<Subscription>;
}

/**
 * Operations on a message log outside the event path: progress reporting (the dashboard's stage
 * backlogs), metrics (consumer lag), and clean-up in tests and benchmarks. Every adapter implements
 * it on the same object as its `MessageLog`; the composition root hands it only to those that need it.
 */
export interface MessageLogAdmin {
  /**
   * Messages not yet committed by `groupId` on `topic` (the group's lag), or null when the
   * group has never committed. For progress reporting and tests.
   */
  lag(groupId: string, topic: string): Promise<number | null>;
  /** The group's lag on each partition of `topic` (every partition, committed or not). For metrics. */
  lagByPartition(groupId: string, topic: string): Promise<PartitionLag[]>;
  /**
   * Every message of `topic` retained when called, read outside any consumer group (nothing is
   * committed, no group lags): partition by partition in ascending partition order, each in offset
   * order; of a partition holding more than `limit` (default 10 000), only its newest `limit`.
   * Messages published after the call may or may not be included. For small topics read whole by
   * operators (dead letters); the answer is held in memory. `not-found` for a topic that does not exist.
   */
  readRetained(topic: string, options?: { readonly limit?: number }): Promise<DeliveredMessage[]>;
  /** Deletes topics (tests clean up with it). Idempotent. */
  deleteTopics(names: readonly string[]): Promise<void>;
}
