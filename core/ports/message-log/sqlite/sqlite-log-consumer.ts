import { randomUUID } from 'node:crypto';
import { KbError } from '../../../errors/kb-error.ts';
import { createFairShares, type FairShares } from '../../../util/fair-shares.ts';
import type { DeliveredMessage, SubscribeOptions, Subscription } from '../message-log.port.ts';
import type { OpenSubscription, SqliteLogContext } from './sqlite-log-context.ts';
import type { MessageRow } from './sqlite-log-schema.ts';
import { addWaker } from './sqlite-log-wakers.ts';

const FETCH_BATCH = 100;
/** Messages after the committed position among which fair turns choose (see `SubscribeOptions.shareOf`). */
const SHARE_WINDOW = 256;

interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Next offset to deliver. */
  position: number;
  worker: Promise<void> | null;
  /** No longer assigned to this member: finish the message in hand, then release. */
  revoking: boolean;
  /** The lease went to another member (or the topic was deleted): stop without committing. */
  lost: boolean;
  /** After a worker failed: not started again before this instant (epoch ms). */
  notBefore?: number;
  /** Fair turns among the shares of this partition's waiting messages. */
  readonly shares: FairShares;
}

/**
 * Consumer groups of the SQLite log.
 *
 * - Consumers poll every `pollIntervalMs` (publishes in the same process wake them at once).
 *   Members of a group register with an expiry and split each topic's partitions round-robin over
 *   the sorted live member ids; a member works a partition only while it holds the partition's lease
 *   (owner + expiry, renewed every `leaseMs / 3`). A member hands a partition over only after the
 *   message in hand is committed; a member that dies keeps its leases until they expire, then the
 *   rest of the group takes over from the last committed offset (at-least-once). Commits are fenced:
 *   a member whose lease was taken over cannot commit.
 * - One partition is worked one message at a time, in offset order; with `keyConcurrency` above 1,
 *   up to that many messages of different keys at once among the first 256 waiting ones, each key's
 *   in order (with `shareOf`, in fair turns). A rejected handler is retried after `retryDelayMs`;
 *   nothing is committed past it before it succeeds (with one at a time, nothing later on its
 *   partition is handled either).
 * - A new group with `fromBeginning: false` starts at the partition's end and commits that position
 *   at once, so a restart does not skip messages published in between.
 * - When the log is closed under a subscription (`closeAbruptly`), it stops polling, releases the
 *   leases of partitions with no handler in flight and leaves the group; messages whose handlers are
 *   still running stay uncommitted and are redelivered once their leases expire.
 */
export function createSqliteSubscriber(ctx: SqliteLogContext): (opts: SubscribeOptions) => Promise<Subscription> {
  const { db, q, file, assertOpen, typeOf, onError, subscriptions } = ctx;
  const { pollIntervalMs, leaseMs, retryDelayMs, keyConcurrency } = ctx.settings;

  async function subscribe(opts: SubscribeOptions): Promise<Subscription> {
    assertOpen();
    const { groupId, handler, shareOf } = opts;
    const topics = [...new Set(opts.topics)];
    if (topics.length === 0) throw new KbError('bad-request', 'Subscribe to at least one topic');
    for (const topic of topics) {
      if (!q.topic.get(topic)) throw new KbError('not-found', `Topic ${topic} does not exist`);
    }
    const fromBeginning = opts.fromBeginning ?? true;
    const memberId = randomUUID();
    const topicsJson = JSON.stringify(topics);
    const held = new Map<string, PartitionState>();
    const sleepers = new Set<() => void>();
    let stopping = false;
    let halted = false; // no more polling (stopped or closed)
    let abandoned = false; // the log was closed under this subscription: never touch the database again
    let timer: NodeJS.Timeout | null = null;
    let nextHeartbeat = 0;

    const stateKey = (topic: string, partition: number) => `${partition}\u0000${topic}`;
    const active = (st: PartitionState) => !stopping && !abandoned && !st.revoking && !st.lost;

    function pause(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(t);
          sleepers.delete(done);
          resolve();
        };
        const t = setTimeout(done, ms);
        sleepers.add(done);
      });
    }

    const heartbeat = db.transaction((now: number) => {
      q.upsertMember.run(groupId, memberId, topicsJson, now + leaseMs);
      q.renewLeases.run(now + leaseMs, groupId, memberId);
      return q.ownedLeases.all(groupId, memberId);
    });

    const commit = db.transaction((st: PartitionState, next: number) => {
      const lease = q.lease.get(groupId, st.topic, st.partition);
      if (!lease || lease.owner !== memberId) return false;
      q.commit.run(groupId, st.topic, st.partition, next, Date.now());
      return true;
    });

    const acquire = db.transaction((topic: string, partition: number, now: number): PartitionState | null => {
      const got = q.acquire.run(groupId, topic, partition, memberId, now + leaseMs, now).changes > 0;
      if (!got) return null;
      const committed = q.committed.get(groupId, topic, partition)?.next_offset;
      let position: number;
      if (committed !== undefined) {
        position = committed;
      } else if (fromBeginning) {
        position = q.lowWatermark.get(topic, partition)?.low ?? q.head.get(topic, partition)?.next_offset ?? 0;
      } else {
        position = q.head.get(topic, partition)?.next_offset ?? 0;
        q.commit.run(groupId, topic, partition, position, now);
      }
      return { topic, partition, position, worker: null, revoking: false, lost: false, shares: createFairShares() };
    });

    function release(st: PartitionState): void {
      held.delete(stateKey(st.topic, st.partition));
      if (!st.lost && !abandoned) q.releaseLease.run(groupId, st.topic, st.partition, memberId);
    }

    function decode(topic: string, partition: number, row: MessageRow): DeliveredMessage {
      const decoded = typeOf(row.schema_id).fromBuffer(row.value) as Record<string, unknown>;
      return {
        topic,
        partition,
        offset: String(row.msg_offset),
        key: row.msg_key,
        value: { ...decoded },
        headers: JSON.parse(row.headers) as Record<string, string>,
        timestamp: row.timestamp,
      };
    }

    /** Handles one message, retrying it in place until it succeeds; false when the partition must stop. */
    async function handleRow(st: PartitionState, row: MessageRow): Promise<boolean> {
      for (;;) {
        let message: DeliveredMessage | undefined;
        const started = performance.now();
        try {
          message = decode(st.topic, st.partition, row);
          await handler(message);
          if (shareOf) st.shares.charge(shareOf(message), performance.now() - started);
          return true;
        } catch (error) {
          if (shareOf && message) st.shares.charge(shareOf(message), performance.now() - started);
          onError(error, message ? { groupId, phase: 'handler', message } : { groupId, phase: 'handler' });
          await pause(retryDelayMs);
          if (!active(st)) return false;
        }
      }
    }

    /** Commits up to `next`; false (the partition is lost) when the lease went elsewhere. */
    function commitTo(st: PartitionState, next: number): boolean {
      if (abandoned || !commit.immediate(st, next)) {
        st.lost = true;
        return false;
      }
      st.position = next;
      return true;
    }

    async function work(st: PartitionState): Promise<void> {
      if (!shareOf && keyConcurrency === 1) {
        while (active(st)) {
          const rows = q.fetch.all(st.topic, st.partition, st.position, FETCH_BATCH);
          if (rows.length === 0) return;
          for (const row of rows) {
            if (!active(st)) return;
            if (!(await handleRow(st, row))) return;
            if (!commitTo(st, row.msg_offset + 1)) return;
          }
        }
        return;
      }
      // Fair turns: the window after the committed position, the first waiting message of each key
      // as candidates, the least-served share's first, up to `keyConcurrency` at once (never two of
      // one key). Handled messages past the first unhandled one are remembered (and redelivered
      // after a crash) until the position passes them.
      const handled = new Set<number>();
      const shareAt = new Map<number, string>();
      const running = new Map<number, Promise<void>>();
      let stopped = false;
      const start = (row: MessageRow): void => {
        const done = handleRow(st, row).then((ok) => {
          running.delete(row.msg_offset);
          if (ok) handled.add(row.msg_offset);
          else stopped = true;
        });
        running.set(row.msg_offset, done);
      };
      try {
        while (active(st) && !stopped) {
          const rows = q.fetch.all(st.topic, st.partition, st.position, SHARE_WINDOW);
          let position = st.position;
          for (const row of rows) {
            if (!handled.has(row.msg_offset)) break;
            handled.delete(row.msg_offset);
            shareAt.delete(row.msg_offset);
            position = row.msg_offset + 1;
          }
          if (position > st.position && !commitTo(st, position)) return;
          const keys = new Set<string>();
          const candidates: { row: MessageRow; share: string }[] = [];
          for (const row of rows) {
            if (row.msg_offset < position || handled.has(row.msg_offset)) continue;
            if (running.has(row.msg_offset) || keys.has(row.msg_key)) {
              keys.add(row.msg_key);
              continue;
            }
            keys.add(row.msg_key);
            let share = shareAt.get(row.msg_offset);
            if (share === undefined) {
              share = shareOfRow(st, row);
              shareAt.set(row.msg_offset, share);
            }
            candidates.push({ row, share });
          }
          if (running.size < keyConcurrency) {
            const next = st.shares.pick(candidates, (c) => c.share);
            if (next) {
              start(next.row);
              continue;
            }
          }
          if (running.size === 0) return;
          // Wait for a handler to end, or (with a free slot) for new messages to come.
          const waits = [...running.values()];
          await Promise.race(running.size < keyConcurrency ? [...waits, pause(pollIntervalMs)] : waits);
        }
      } finally {
        // The partition is handed over only once the handlers in hand have ended.
        while (running.size > 0) await Promise.allSettled([...running.values()]);
        if (!stopped && !st.lost && !abandoned) {
          const rows = q.fetch.all(st.topic, st.partition, st.position, SHARE_WINDOW);
          let position = st.position;
          for (const row of rows) {
            if (!handled.has(row.msg_offset)) break;
            position = row.msg_offset + 1;
          }
          if (position > st.position) commitTo(st, position);
        }
      }
    }

    /** The share of a stored message (an undecodable one is a share of its own: it fails in its handler). */
    function shareOfRow(st: PartitionState, row: MessageRow): string {
      try {
        return shareOf ? shareOf(decode(st.topic, st.partition, row)) : '';
      } catch {
        return '';
      }
    }

    function startWorker(st: PartitionState): void {
      let failed = false;
      st.worker = work(st)
        .catch((error: unknown) => {
          failed = true;
          onError(error, { groupId, phase: 'poll' });
        })
        .finally(() => {
          st.worker = null;
          if (abandoned) return;
          try {
            if (st.lost) held.delete(stateKey(st.topic, st.partition));
            else if (st.revoking) release(st);
            // A worker that failed (its commit could not be written: a full disk, say) is started
            // again after the retry delay, not at once, so a lasting failure is no hot loop.
            else if (failed) st.notBefore = Date.now() + retryDelayMs;
            else if (!stopping) schedule(0);
          } catch (error) {
            onError(error, { groupId, phase: 'poll' });
          }
        });
    }

    function tick(): void {
      const now = Date.now();
      if (now >= nextHeartbeat) {
        const owned = new Set(heartbeat.immediate(now).map((row) => stateKey(row.topic, row.part)));
        nextHeartbeat = now + Math.max(1, Math.floor(leaseMs / 3));
        for (const [key, st] of held) {
          if (!owned.has(key)) {
            st.lost = true;
            if (!st.worker) held.delete(key);
          }
        }
      }
      const members = q.liveMembers.all(groupId, now);
      for (const topic of topics) {
        const row = q.topic.get(topic);
        if (!row) {
          for (const [key, st] of held) {
            if (st.topic !== topic) continue;
            st.lost = true;
            if (!st.worker) held.delete(key);
          }
          continue;
        }
        const ids = members.filter((m) => (JSON.parse(m.topics) as string[]).includes(topic)).map((m) => m.member_id);
        if (!ids.includes(memberId)) ids.push(memberId);
        ids.sort();
        const index = ids.indexOf(memberId);
        for (let p = 0; p < row.partitions; p++) {
          const assigned = p % ids.length === index;
          const st = held.get(stateKey(topic, p));
          if (st && !assigned && !st.lost) {
            st.revoking = true;
            if (!st.worker) release(st);
          } else if (!st && assigned) {
            const lease = q.lease.get(groupId, topic, p);
            if (lease && lease.owner !== memberId && lease.expires_at > now) continue;
            const acquired = acquire.immediate(topic, p, now);
            if (acquired) held.set(stateKey(topic, p), acquired);
          }
        }
        const heads = new Map(q.heads.all(topic).map((h) => [h.part, h.next_offset]));
        for (const st of held.values()) {
          if (st.topic !== topic || st.worker || !active(st) || (st.notBefore ?? 0) > now) continue;
          if ((heads.get(st.partition) ?? 0) > st.position) startWorker(st);
        }
      }
    }

    /** Polls in a row that failed (the database cannot be written: a full disk, say). */
    let failedPolls = 0;
    function runTick(): void {
      timer = null;
      if (halted) return;
      try {
        tick();
        failedPolls = 0;
      } catch (error) {
        failedPolls += 1;
        // Told once, then once in 20: a lasting failure is no flood of the log.
        if (failedPolls % 20 === 1) onError(error, { groupId, phase: 'poll' });
      }
      // A failing poll backs off (doubling up to the retry delay), so it is no hot loop either.
      schedule(failedPolls === 0 ? pollIntervalMs : Math.min(retryDelayMs, pollIntervalMs * 2 ** failedPolls));
    }

    function schedule(delay: number): void {
      if (halted) return;
      if (timer) {
        if (delay > 0) return;
        clearTimeout(timer);
      }
      timer = setTimeout(runTick, delay);
    }

    const removeWaker = addWaker(file, () => schedule(0));

    function halt(): void {
      halted = true;
      stopping = true;
      if (timer) clearTimeout(timer);
      timer = null;
      removeWaker();
      for (const wake of [...sleepers]) wake();
    }

    const handle: OpenSubscription = {
      closeAbruptly() {
        halt();
        const busy = [...held.values()].filter((st) => st.worker && !st.lost);
        try {
          db.transaction(() => {
            for (const st of held.values()) {
              if (!busy.includes(st) && !st.lost) q.releaseLease.run(groupId, st.topic, st.partition, memberId);
            }
            q.deleteMember.run(groupId, memberId);
          }).immediate();
        } catch (error) {
          onError(error, { groupId, phase: 'poll' });
        }
        abandoned = true;
        subscriptions.delete(handle);
      },
    };
    subscriptions.add(handle);

    try {
      tick();
    } catch (error) {
      onError(error, { groupId, phase: 'poll' });
    }
    schedule(pollIntervalMs);

    let stopped: Promise<void> | null = null;
    return {
      stop() {
        stopped ??= (async () => {
          if (abandoned) return;
          halt();
          await Promise.all([...held.values()].map((st) => st.worker));
          if (abandoned) return;
          subscriptions.delete(handle);
          db.transaction(() => {
            q.releaseAll.run(groupId, memberId);
            q.deleteMember.run(groupId, memberId);
          }).immediate();
          held.clear();
        })();
        return stopped;
      },
    };
  }

  return subscribe;
}
