import { KbError } from '../../../errors/kb-error.ts';
import type { DeliveredMessage, MessageLogTail, Subscription, TailOptions } from '../message-log.port.ts';
import type { SqliteLogContext } from './sqlite-log-context.ts';
import type { MessageRow } from './sqlite-log-schema.ts';
import { addWaker } from './sqlite-log-wakers.ts';

/** Messages read per partition per query. */
const BATCH = 200;

/**
 * Tails of the SQLite log: positions kept in memory, read every `pollIntervalMs` and at once when
 * this process publishes to the same file. A tail starting at `sinceMs` begins on each partition
 * at the first retained message with a timestamp at or after it. It is caught up once a read of
 * every partition, after the start, came back short of a full batch (it reached that partition's
 * end, which holds everything appended before the start).
 */
export function createSqliteTail(ctx: SqliteLogContext): MessageLogTail['tail'] {
  const { db, q } = ctx;
  const firstSince = db.prepare<[string, number, number], { first: number | null }>(
    'SELECT MIN(msg_offset) AS first FROM ml_messages WHERE topic = ? AND part = ? AND timestamp >= ?',
  );

  return async function tail({ topic, sinceMs, handler, onEnd, onCaughtUp }: TailOptions): Promise<Subscription> {
    ctx.assertOpen();
    if (!q.topic.get(topic)) throw new KbError('not-found', `Topic ${topic} does not exist`);
    const next = new Map<number, number>();
    for (const { part, next_offset: head } of q.heads.all(topic)) {
      const first = sinceMs === undefined ? null : firstSince.get(topic, part, sinceMs)?.first;
      next.set(part, first ?? head);
    }
    let stopped = false;
    let pumping: Promise<void> | null = null;
    let again = false;
    /** Partitions not yet read to their end since the start (emptied once, then caught up). */
    const behind = onCaughtUp ? new Set(next.keys()) : new Set<number>();

    const decode = (partition: number, row: MessageRow): DeliveredMessage => ({
      topic,
      partition,
      offset: String(row.msg_offset),
      key: row.msg_key,
      value: { ...(ctx.typeOf(row.schema_id).fromBuffer(row.value) as Record<string, unknown>) },
      headers: JSON.parse(row.headers) as Record<string, string>,
      timestamp: row.timestamp,
    });

    async function drain(): Promise<void> {
      do {
        again = false;
        for (const [part, from] of next) {
          if (stopped || ctx.isClosed()) return;
          const rows = q.fetch.all(topic, part, from, BATCH);
          for (const row of rows) {
            if (stopped) return;
            await handler(decode(part, row));
            next.set(part, row.msg_offset + 1);
          }
          if (rows.length === BATCH) again = true;
          else if (behind.delete(part) && behind.size === 0) onCaughtUp?.();
        }
      } while (again && !stopped);
    }

    function pump(): void {
      if (stopped) return;
      if (pumping) {
        again = true;
        return;
      }
      pumping = drain()
        .catch((error: unknown) => {
          if (stopped) return;
          end();
          onEnd?.(error);
        })
        .finally(() => {
          pumping = null;
        });
    }

    const removeWaker = addWaker(ctx.file, pump);
    const timer = setInterval(pump, ctx.settings.pollIntervalMs);
    timer.unref();
    const handle = { closeAbruptly: () => end() };
    ctx.subscriptions.add(handle);
    function end(): void {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      removeWaker();
      ctx.subscriptions.delete(handle);
    }
    pump();
    return {
      async stop() {
        end();
        await pumping;
      },
    };
  };
}
