/**
 * A consumer in its own process, for the SQLite message log's multi-process tests.
 *
 * Arguments: `<log file> <topic> <group id> <lease ms>`. It reports over IPC: `{type: 'ready'}` once
 * subscribed, `{type: 'handled', id, partition, offset, hanging}` as each message reaches the
 * handler. After the parent sends `'hang'` (acknowledged with `{type: 'hanging'}`), handlers never
 * resolve, so those messages stay uncommitted until the process is killed.
 */
import { createSqliteMessageLog } from '../../core/ports/message-log/sqlite.adapter.ts';

const [file, topic, groupId, leaseMs] = process.argv.slice(2);
if (!file || !topic || !groupId || !leaseMs || !process.send) {
  throw new Error('usage: message-log-consumer.process.ts <file> <topic> <group> <leaseMs> (with an IPC channel)');
}
const send = (payload: Record<string, unknown>) => process.send?.(payload);

let hang = false;
process.on('message', (command) => {
  if (command === 'hang') {
    hang = true;
    send({ type: 'hanging' });
  }
});
process.on('disconnect', () => process.exit(0));

const log = createSqliteMessageLog({ file, leaseMs: Number(leaseMs), pollIntervalMs: 25 });
await log.subscribe({
  groupId,
  topics: [topic],
  handler: async (m) => {
    const hanging = hang;
    send({ type: 'handled', id: m.value.id, partition: m.partition, offset: m.offset, hanging });
    if (hanging) await new Promise<never>(() => undefined);
  },
});
send({ type: 'ready' });
