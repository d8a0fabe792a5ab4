import { KbError } from '../../../errors/kb-error.ts';
import type { DeliveredMessage, MessageLogAdmin } from '../message-log.port.ts';
import type { SqliteLogContext } from './sqlite-log-context.ts';

/** Messages `readRetained` reads of one partition by default: the newest this many. */
const DEFAULT_READ_LIMIT = 10_000;

/**
 * Progress and clean-up operations of the SQLite log. `lag` counts, per partition, from the group's
 * committed offset (or the oldest retained message where it has none) to the end.
 */
export function createSqliteLogAdmin(ctx: SqliteLogContext): MessageLogAdmin {
  const { db, q, assertOpen } = ctx;

  const removeTopics = db.transaction((names: readonly string[]) => {
    for (const name of names) {
      for (const table of ['ml_messages', 'ml_partitions', 'ml_offsets', 'ml_leases']) {
        db.prepare(`DELETE FROM ${table} WHERE topic = ?`).run(name);
      }
      db.prepare('DELETE FROM ml_topics WHERE name = ?').run(name);
      db.prepare('DELETE FROM ml_schemas WHERE topic = ?').run(name);
    }
  });

  return {
    async lag(groupId, topic) {
      assertOpen();
      const read = db.transaction(() => {
        const committed = q.groupOffsets.all(groupId, topic);
        if (committed.length === 0) return null;
        const byPartition = new Map(committed.map((c) => [c.part, c.next_offset]));
        let lag = 0;
        for (const { part, next_offset: head } of q.heads.all(topic)) {
          const from = byPartition.get(part) ?? q.lowWatermark.get(topic, part)?.low ?? head;
          lag += Math.max(0, head - from);
        }
        return lag;
      });
      return read();
    },

    async lagByPartition(groupId, topic) {
      assertOpen();
      const read = db.transaction(() => {
        const byPartition = new Map(q.groupOffsets.all(groupId, topic).map((c) => [c.part, c.next_offset]));
        const heads = q.heads.all(topic).sort((a, b) => a.part - b.part);
        return heads.map(({ part, next_offset: head }) => {
          const from = byPartition.get(part) ?? q.lowWatermark.get(topic, part)?.low ?? head;
          return { partition: part, lag: Math.max(0, head - from) };
        });
      });
      return read();
    },

    async readRetained(topic, options = {}) {
      assertOpen();
      if (!q.topic.get(topic)) throw new KbError('not-found', `Topic ${topic} does not exist`);
      const limit = options.limit ?? DEFAULT_READ_LIMIT;
      const read = db.transaction(() => {
        const out: DeliveredMessage[] = [];
        const heads = q.heads.all(topic).sort((a, b) => a.part - b.part);
        for (const { part, next_offset: head } of heads) {
          const low = q.lowWatermark.get(topic, part)?.low ?? head;
          const rows = q.fetch.all(topic, part, Math.max(low, head - limit), limit);
          for (const row of rows) {
            out.push({
              topic,
              partition: part,
              offset: String(row.msg_offset),
              key: row.msg_key,
              value: { ...(ctx.typeOf(row.schema_id).fromBuffer(row.value) as Record<string, unknown>) },
              headers: JSON.parse(row.headers) as Record<string, string>,
              timestamp: row.timestamp,
            });
          }
        }
        return out;
      });
      return read();
    },

    async deleteTopics(names) {
      assertOpen();
      if (names.length > 0) removeTopics.immediate(names);
    },
  };
}
