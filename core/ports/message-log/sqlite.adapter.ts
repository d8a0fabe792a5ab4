import type { MessageLog, MessageLogAdmin, MessageLogTail } from './message-log.port.ts';
import { createSqliteLogAdmin } from './sqlite/sqlite-log-admin.ts';
import { createSqliteSubscriber } from './sqlite/sqlite-log-consumer.ts';
import { openLogContext } from './sqlite/sqlite-log-context.ts';
import type { SqliteMessageLogOptions } from './sqlite/sqlite-log-options.ts';
import { createSqlitePublisher } from './sqlite/sqlite-log-publisher.ts';
import { startSqliteLogRetention } from './sqlite/sqlite-log-retention.ts';
import { createSqliteTail } from './sqlite/sqlite-log-tail.ts';

export { murmur2, partitionForKey } from './sqlite/key-partitioner.ts';
export type { MessageLogErrorContext, SqliteMessageLogOptions } from './sqlite/sqlite-log-options.ts';

/** The SQLite message log, with its retention sweep exposed for operators and tests. */
export interface SqliteMessageLog extends MessageLog, MessageLogAdmin, MessageLogTail {
  /** Deletes messages older than `retentionMs` that every committing group has consumed; returns how many. */
  sweepRetention(now?: number): number;
}

/**
 * A durable, partitioned message log in one SQLite file, with Kafka's consumer-group semantics.
 *
 * - Topics record their partition count and Avro schema; `ensureTopics` on an existing topic keeps
 *   its partition count and makes the given schema current (earlier messages stay readable: each
 *   message remembers the schema it was written with). Values are validated with `avsc` and stored
 *   as Avro binary; consumers receive them decoded as plain objects.
 * - A key's partition is Kafka's murmur2 partitioning, so per-key order holds.
 * - Consumers poll every `pollIntervalMs` (publishes in the same process wake them at once).
 *   Members of a group register with an expiry and split each topic's partitions round-robin over
 *   the sorted live member ids; a member works a partition only while it holds the partition's lease
 *   (owner + expiry, renewed every `leaseMs / 3`). A member hands a partition over only after the
 *   message in hand is committed; a member that dies keeps its leases until they expire, then the
 *   rest of the group takes over from the last committed offset (at-least-once). Commits are fenced:
 *   a member whose lease was taken over cannot commit.
 * - A new group with `fromBeginning: false` starts at the partition's end and commits that position
 *   at once, so a restart does not skip messages published in between.
 * - `close()` leaves at once: it stops polling, releases the leases of partitions with no handler in
 *   flight and closes the database; messages whose handlers are still running stay uncommitted and are
 *   redelivered to the group once their leases expire. Call `stop()` on subscriptions first for a
 *   graceful shutdown.
 * - Durability: WAL with `synchronous=NORMAL` — a resolved `publish` or commit survives a process
 *   crash; an operating-system crash or power loss may lose the last transactions.
 * - Tails (`tail`) keep their positions in memory and read like consumers (every `pollIntervalMs`,
 *   at once on a publish in this process); they hold no lease and commit nothing.
 * - Retention: see {@link SqliteMessageLogOptions.retentionMs}. `lag` counts, per partition, from the
 *   group's committed offset (or the oldest retained message where it has none) to the end.
 *
 * The parts live under `sqlite/`: the tables and statements (`sqlite-log-schema.ts`), topics and
 * publishing (`sqlite-log-publisher.ts`), consumer groups (`sqlite-log-consumer.ts`), lag and topic
 * deletion (`sqlite-log-admin.ts`) and the retention sweep (`sqlite-log-retention.ts`).
 */
export function createSqliteMessageLog(options: SqliteMessageLogOptions): SqliteMessageLog {
  const ctx = openLogContext(options);
  const publisher = createSqlitePublisher(ctx);
  const subscribe = createSqliteSubscriber(ctx);
  const admin = createSqliteLogAdmin(ctx);
  const retention = startSqliteLogRetention(ctx);

  return {
    kind: 'SQLite log',
    ...publisher,
    subscribe,
    tail: createSqliteTail(ctx),
    ...admin,
    sweepRetention: retention.sweepRetention,

    async ping() {
      ctx.assertOpen();
      ctx.db.prepare('SELECT 1').get();
    },

    async close() {
      if (ctx.isClosed()) return;
      for (const subscription of [...ctx.subscriptions]) subscription.closeAbruptly();
      ctx.markClosed();
      retention.stop();
      ctx.db.close();
    },
  };
}
