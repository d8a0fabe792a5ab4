import type { KafkaMessage } from 'kafkajs';
import { createFairShares } from '../../util/fair-shares.ts';
import type { DeliveredMessage } from './message-log.port.ts';

/** How one handler call ended: resolved, rejected, or given up (subscription abandoned, or too slow). */
export type HandlerOutcome = 'done' | 'failed' | 'abandoned';

/** What the dispatcher needs from its consumer: the engine side of one subscription. */
export interface DispatcherDeps {
  /** Decodes a fetched message; null when it can never be handled (it is skipped). Rejects when decoding may work later. */
  readonly decode: (topic: string, partition: number, message: KafkaMessage) => Promise<DeliveredMessage | null>;
  /** Runs the subscription's handler on one message. Never rejects. */
  readonly handle: (message: DeliveredMessage) => Promise<HandlerOutcome>;
  /** Records that every message of the partition up to and including `offset` is handled. */
  readonly commit: (topic: string, partition: number, offset: string) => void;
  /** Moves the partition's fetch position back to `offset` (the partition is paused when this is called). */
  readonly rewind: (topic: string, partition: number, offset: string) => void;
  /** Stops or restarts fetching the partition. */
  readonly setPaused: (topic: string, partition: number, paused: boolean) => void;
  /** The share (tenant) of a message: with it, waiting messages are started in fair turns among shares. */
  readonly shareOf?: (message: DeliveredMessage) => string;
  /** Handlers running at once on one partition (each key's messages still one at a time). */
  readonly keysPerPartition: number;
  /** Handlers running at once over every partition of the subscription. */
  readonly maxRunning: number;
  /** Pause before the messages after a failed one are fetched again. */
  readonly retryDelayMs: number;
  /** Messages a partition may hold waiting before its fetching pauses (it resumes at a quarter of this). */
  readonly maxWaitingPerPartition: number;
}

/**
 * Handles the messages a consumer fetches, batch after batch, without waiting for one batch to end
 * before the next is taken: each partition keeps a queue of the messages it fetched and not yet
 * committed, and a free handler slot goes to the next message any queue can start.
 *
 * - Order: each key's messages run one after another in offset order. Different keys run
 *   concurrently, up to `keysPerPartition` on a partition and `maxRunning` in all.
 * - Turns: without `shareOf`, the earliest fetched startable message goes first. With it, the
 *   earliest startable message of the share whose handlers have taken the least time so far
 *   (over every partition of the subscription, see `FairShares`), so a share that arrives behind
 *   another's backlog waits at most for a running handler to end, not for a batch to drain.
 * - Commits: `commit` is called with the last offset of the run of handled messages from the
 *   queue's start, so it never passes a message that is not handled.
 * - Failure: a handler that rejects (or a message that cannot be decoded yet) stops the partition:
 *   fetching pauses, nothing more starts there, and once its running handlers end the partition is
 *   rewound to its first unhandled message and fetched again after `retryDelayMs` (messages of
 *   other keys after it that were handled are delivered again: at-least-once).
 * - Bounded: a partition holding `maxWaitingPerPartition` waiting messages stops fetching until a
 *   quarter of that is left.
 * - Duplicates: messages at offsets the partition's queue already took (a group re-join fetches
 *   from the last commit again) are ignored.
 */
export interface KafkaDispatcher {
  /** Takes a fetched batch of a partition. Returns false (taking nothing) when the partition is being rewound. */
  accept(topic: string, partition: number, messages: readonly KafkaMessage[]): boolean;
  /**
   * Forgets the partitions that `assigned` no longer includes (after a group re-join): their
   * waiting messages are dropped, and their running handlers end without a commit.
   */
  retain(assigned: (topic: string, partition: number) => boolean): void;
  /** Starts nothing more; resolves once every running handler has ended. Waiting messages stay uncommitted. */
  close(): Promise<void>;
  /** Handlers running now. */
  readonly running: number;
}

/** `dropped`: taken out of its queue (rewound or lost) before it started. */
type Status = 'decoding' | 'waiting' | 'running' | 'done' | 'dropped';

interface Entry {
  readonly offset: string;
  readonly key: string;
  /** Arrival order over every partition (ties of fair turns go to the earliest). */
  readonly seq: number;
  status: Status;
  message: DeliveredMessage | null;
}

interface PartitionQueue {
  readonly topic: string;
  readonly partition: number;
  /** Messages fetched and not yet committed, in offset order, from `head` on. */
  entries: Entry[];
  head: number;
  /** The offset after the last message taken; earlier ones are duplicates. */
  next: bigint | null;
  running: number;
  waiting: number;
  readonly busyKeys: Set<string>;
  /** A handler failed: nothing starts until the partition has been rewound and the pause is over. */
  halted: boolean;
  /** No longer assigned: running handlers end without a commit. */
  lost: boolean;
  /** What `setPaused` was last told. */
  paused: boolean;
  full: boolean;
  retryTimer: NodeJS.Timeout | null;
}

/** Waiting messages of one partition looked at when choosing the next message to start. */
const WINDOW = 256;
/** Done entries at a queue's start before the array is compacted. */
const COMPACT_AFTER = 1_024;

export function createKafkaDispatcher(deps: DispatcherDeps): KafkaDispatcher {
  const queues = new Map<string, PartitionQueue>();
  const shares = createFairShares();
  const runningWork = new Set<Promise<void>>();
  let running = 0;
  let seq = 0;
  let closed = false;
  /** The queue the next scan starts from, so partitions take turns without `shareOf`. */
  let rotation = 0;

  const idOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;

  function updatePause(queue: PartitionQueue): void {
    if (queue.lost) return;
    if (queue.waiting >= deps.maxWaitingPerPartition) queue.full = true;
    else if (queue.waiting <= Math.floor(deps.maxWaitingPerPartition / 4)) queue.full = false;
    const wanted = queue.halted || queue.full;
    if (wanted === queue.paused || (closed && !wanted)) return;
    queue.paused = wanted;
    deps.setPaused(queue.topic, queue.partition, wanted);
  }

  /** Commits the run of handled messages at the queue's start. */
  function advance(queue: PartitionQueue): void {
    const before = queue.head;
    while (queue.head < queue.entries.length && (queue.entries[queue.head] as Entry).status === 'done') queue.head++;
    if (queue.head === before) return;
    const last = queue.entries[queue.head - 1] as Entry;
    if (!queue.lost) deps.commit(queue.topic, queue.partition, last.offset);
    if (queue.head >= COMPACT_AFTER || queue.head === queue.entries.length) {
      queue.entries = queue.entries.slice(queue.head);
      queue.head = 0;
    }
  }

  function dropWaiting(queue: PartitionQueue): void {
    for (const entry of queue.entries)
      if (entry.status === 'decoding' || entry.status === 'waiting') entry.status = 'dropped';
  }

  function halt(queue: PartitionQueue): void {
    queue.halted = true;
    updatePause(queue);
    rewindWhenIdle(queue);
  }

  /** Once a halted partition's handlers have ended: back to its first unhandled message, after a pause. */
  function rewindWhenIdle(queue: PartitionQueue): void {
    if (!queue.halted || queue.running > 0 || queue.lost || closed || queue.retryTimer) return;
    const first = queue.entries.slice(queue.head).find((entry) => entry.status !== 'done');
    if (first) {
      deps.rewind(queue.topic, queue.partition, first.offset);
      queue.next = BigInt(first.offset);
    }
    dropWaiting(queue);
    queue.entries = [];
    queue.head = 0;
    queue.waiting = 0;
    queue.retryTimer = setTimeout(() => {
      queue.retryTimer = null;
      queue.halted = false;
      updatePause(queue);
    }, deps.retryDelayMs);
  }

  function decodeEntry(queue: PartitionQueue, entry: Entry, message: KafkaMessage): void {
    deps.decode(queue.topic, queue.partition, message).then(
      (delivered) => {
        if (entry.status !== 'decoding') return; // dropped meanwhile (rewound or lost)
        if (delivered === null) {
          entry.status = 'done';
          queue.waiting -= 1;
          advance(queue);
          updatePause(queue);
        } else {
          entry.message = delivered;
          entry.status = 'waiting';
        }
        pump();
      },
      () => {
        // The registry is unreachable: the partition tries again after the pause.
        if (entry.status !== 'decoding' || queue.lost) return;
        halt(queue);
      },
    );
  }

  interface Candidate {
    readonly queue: PartitionQueue;
    readonly entry: Entry;
    readonly share: string;
  }

  /** The first startable message of each free key of a queue, in offset order. */
  function candidatesOf(queue: PartitionQueue, out: Candidate[]): void {
    if (queue.halted || queue.lost || queue.running >= deps.keysPerPartition) return;
    const seen = new Set<string>();
    let scanned = 0;
    for (let i = queue.head; i < queue.entries.length && scanned < WINDOW; i++) {
      const entry = queue.entries[i] as Entry;
      if (entry.status !== 'decoding' && entry.status !== 'waiting') continue;
      scanned += 1;
      if (seen.has(entry.key)) continue;
      seen.add(entry.key);
      // A key whose earlier message still decodes, or runs, waits for it.
      if (entry.status !== 'waiting' || queue.busyKeys.has(entry.key)) continue;
      const message = entry.message as DeliveredMessage;
      out.push({ queue, entry, share: deps.shareOf ? deps.shareOf(message) : '' });
      if (!deps.shareOf) return;
    }
  }

  function pick(): Candidate | undefined {
    const list = [...queues.values()];
    const candidates: Candidate[] = [];
    for (let i = 0; i < list.length; i++) {
      candidatesOf(list[(rotation + i) % list.length] as PartitionQueue, candidates);
      if (!deps.shareOf && candidates.length > 0) break;
    }
    rotation = list.length === 0 ? 0 : (rotation + 1) % list.length;
    if (!deps.shareOf) return candidates[0];
    candidates.sort((a, b) => a.entry.seq - b.entry.seq);
    return shares.pick(candidates, (candidate) => candidate.share);
  }

  function start({ queue, entry }: Candidate): void {
    const message = entry.message as DeliveredMessage;
    entry.status = 'running';
    queue.waiting -= 1;
    queue.running += 1;
    queue.busyKeys.add(entry.key);
    running += 1;
    const started = performance.now();
    const work = deps.handle(message).then((outcome) => {
      running -= 1;
      queue.running -= 1;
      queue.busyKeys.delete(entry.key);
      if (deps.shareOf) shares.charge(deps.shareOf(message), performance.now() - started);
      if (outcome === 'done' && entry.status === 'running') {
        entry.status = 'done';
        advance(queue);
      } else if (outcome !== 'done' && !queue.lost) {
        if (entry.status === 'running') entry.status = 'waiting';
        halt(queue);
      }
      rewindWhenIdle(queue);
      updatePause(queue);
      pump();
    });
    runningWork.add(work);
    void work.finally(() => runningWork.delete(work));
    updatePause(queue);
  }

  function pump(): void {
    while (!closed && running < deps.maxRunning) {
      const chosen = pick();
      if (!chosen) return;
      start(chosen);
    }
  }

  return {
    accept(topic, partition, messages) {
      if (closed) return false;
      const id = idOf(topic, partition);
      let queue = queues.get(id);
      if (!queue) {
        queue = {
          topic,
          partition,
          entries: [],
          head: 0,
          next: null,
          running: 0,
          waiting: 0,
          busyKeys: new Set(),
          halted: false,
          lost: false,
          paused: false,
          full: false,
          retryTimer: null,
        };
        queues.set(id, queue);
      }
      if (queue.halted) return false;
      for (const message of messages) {
        const offset = BigInt(message.offset);
        if (queue.next !== null && offset < queue.next) continue;
        queue.next = offset + 1n;
        const entry: Entry = {
          offset: message.offset,
          key: message.key ? message.key.toString('utf8') : '',
          seq: seq++,
          status: 'decoding',
          message: null,
        };
        queue.entries.push(entry);
        queue.waiting += 1;
        decodeEntry(queue, entry, message);
      }
      updatePause(queue);
      pump();
      return true;
    },
    retain(assigned) {
      for (const [id, queue] of queues) {
        if (assigned(queue.topic, queue.partition)) {
          // A re-join may reset what the client pauses: say it again.
          if (queue.paused) deps.setPaused(queue.topic, queue.partition, true);
          continue;
        }
        queue.lost = true;
        if (queue.retryTimer) clearTimeout(queue.retryTimer);
        dropWaiting(queue);
        queues.delete(id);
      }
      pump();
    },
    async close() {
      closed = true;
      for (const queue of queues.values()) if (queue.retryTimer) clearTimeout(queue.retryTimer);
      await Promise.allSettled([...runningWork]);
    },
    get running() {
      return running;
    },
  };
}
