import { createHash } from 'node:crypto';
import type { Schema as AvscSchema, Type as AvscType } from 'avsc';
import avro from 'avsc';
import { KbError } from '../../../errors/kb-error.ts';
import type { MessageLog, OutgoingMessage, TopicSpec } from '../message-log.port.ts';
import { partitionForKey } from './key-partitioner.ts';
import type { SqliteLogContext } from './sqlite-log-context.ts';
import { notifyPublished } from './sqlite-log-wakers.ts';

/**
 * Topics and publishing of the SQLite log. `ensureTopics` records a topic's partition count and
 * makes the given Avro schema current (an existing topic keeps its partition count; earlier messages
 * stay readable, each remembers the schema it was written with). `publish` validates every value
 * with `avsc` before appending any (all or nothing, in one transaction), stores them as Avro binary
 * on the key's partition (Kafka's murmur2 partitioning, so per-key order holds) and wakes this
 * process's consumers of the same file.
 */
export function createSqlitePublisher(ctx: SqliteLogContext): Pick<MessageLog, 'ensureTopics' | 'publish'> {
  const { db, q, assertOpen, typeOf } = ctx;

  const ensure = db.transaction((specs: readonly TopicSpec[], now: number) => {
    for (const spec of specs) {
      const schemaText = JSON.stringify(spec.schema);
      const fingerprint = createHash('sha256').update(schemaText).digest('hex');
      let schemaId = q.schemaByFingerprint.get(spec.name, fingerprint)?.id;
      if (schemaId === undefined) {
        schemaId = Number(q.insertSchema.run(spec.name, fingerprint, schemaText).lastInsertRowid);
      }
      const existing = q.topic.get(spec.name);
      if (existing) {
        if (existing.schema_id !== schemaId) q.setTopicSchema.run(schemaId, spec.name);
        continue;
      }
      q.insertTopic.run(spec.name, spec.partitions, schemaId, now);
      for (let p = 0; p < spec.partitions; p++) q.insertPartition.run(spec.name, p);
    }
  });

  const append = db.transaction(
    (topic: string, partitions: number, schemaId: number, encoded: readonly [OutgoingMessage, Buffer][]) => {
      const current = q.topic.get(topic);
      if (!current || current.partitions !== partitions) {
        throw new KbError('not-found', `Topic ${topic} does not exist`);
      }
      const next = new Map<number, number>();
      const now = Date.now();
      for (const [message, value] of encoded) {
        const partition = partitionForKey(message.key, partitions);
        let offset = next.get(partition);
        if (offset === undefined) {
          const head = q.head.get(topic, partition);
          if (!head) throw new KbError('not-found', `Topic ${topic} has no partition ${partition}`);
          offset = head.next_offset;
        }
        q.insertMessage.run(
          topic,
          partition,
          offset,
          message.key,
          value,
          schemaId,
          JSON.stringify(message.headers ?? {}),
          now,
        );
        next.set(partition, offset + 1);
      }
      for (const [partition, offset] of next) q.setHead.run(offset, topic, partition);
    },
  );

  function validationError(topic: string, index: number, message: OutgoingMessage, type: AvscType): KbError | null {
    if (typeof message.key !== 'string') {
      return new KbError('invalid-event', `Message ${index} for topic ${topic} has no string key`);
    }
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      if (typeof value !== 'string') {
        return new KbError('invalid-event', `Header ${name} of message ${index} for topic ${topic} is not a string`);
      }
    }
    const paths: string[] = [];
    const valid = type.isValid(message.value, {
      errorHook: (fieldPath: string[]) => paths.push(fieldPath.join('.') || '(value)'),
    });
    if (valid) return null;
    return new KbError(
      'invalid-event',
      `Message ${index} (key ${message.key}) does not match the schema of topic ${topic}; invalid: ${paths.join(', ')}`,
    );
  }

  return {
    async ensureTopics(specs) {
      assertOpen();
      for (const spec of specs) {
        if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
          throw new KbError('bad-request', `Topic ${spec.name} needs a positive whole number of partitions`);
        }
        try {
          avro.Type.forSchema(spec.schema as AvscSchema);
        } catch (error) {
          throw new KbError(
            'bad-request',
            `Topic ${spec.name} has an invalid Avro schema: ${(error as Error).message}`,
          );
        }
      }
      ensure.immediate(specs, Date.now());
    },

    async publish(topic, messages) {
      assertOpen();
      if (messages.length === 0) return;
      const row = q.topic.get(topic);
      if (!row) throw new KbError('not-found', `Topic ${topic} does not exist`);
      const type = typeOf(row.schema_id);
      const encoded: [OutgoingMessage, Buffer][] = [];
      for (const [index, message] of messages.entries()) {
        const invalid = validationError(topic, index, message, type);
        if (invalid) throw invalid;
        encoded.push([message, type.toBuffer(message.value)]);
      }
      append.immediate(topic, row.partitions, row.schema_id, encoded);
      notifyPublished(ctx.file);
    },
  };
}
