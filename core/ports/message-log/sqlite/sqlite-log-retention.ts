import type { SqliteLogContext } from './sqlite-log-context.ts';

/** The retention sweep of the SQLite log: see `SqliteMessageLogOptions.retentionMs`. */
export interface SqliteLogRetention {
  /** Deletes messages older than `retentionMs` that every committing group has consumed; returns how many. */
  sweepRetention(now?: number): number;
  /** Stops the periodic sweep. */
  stop(): void;
}

/**
 * Runs the sweep every `retentionCheckMs` (unless 0) in this instance. A message is deleted only
 * when it is older than `retentionMs` AND every group that has committed on its topic has committed
 * past it; members and leases expired for a whole lease period are removed too.
 */
export function startSqliteLogRetention(ctx: SqliteLogContext): SqliteLogRetention {
  const { q, assertOpen, onError } = ctx;
  const { retentionMs, retentionCheckMs, leaseMs } = ctx.settings;

  function sweepRetention(now = Date.now()): number {
    assertOpen();
    const cutoff = now - retentionMs;
    let deleted = 0;
    for (const { topic, part } of q.allPartitions.all()) {
      const groups = q.topicGroups.all(topic).length;
      if (groups === 0) continue;
      const offsets = q.partitionOffsets.all(topic, part);
      // A group that committed on other partitions of the topic but not this one still starts here.
      if (offsets.length < groups) continue;
      const bound = Math.min(...offsets.map((o) => o.next_offset));
      deleted += q.deleteOld.run(topic, part, bound, cutoff).changes;
    }
    q.deleteDeadMembers.run(now - leaseMs);
    q.deleteDeadLeases.run(now - leaseMs);
    return deleted;
  }

  const retentionTimer =
    retentionCheckMs > 0
      ? setInterval(() => {
          try {
            if (!ctx.isClosed()) sweepRetention();
          } catch (error) {
            onError(error, { groupId: '', phase: 'retention' });
          }
        }, retentionCheckMs)
      : null;
  retentionTimer?.unref();

  return {
    sweepRetention,
    stop() {
      if (retentionTimer) clearInterval(retentionTimer);
    },
  };
}
