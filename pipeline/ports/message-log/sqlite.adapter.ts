import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Schema as AvscSchema, Type as AvscType } from 'avsc';
import avro from 'avsc';
import { KbError } from '../../errors/kb-error.ts';
import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import type {
  DeliveredMessage,
  MessageLog,
  OutgoingMessage,
  SubscribeOptions,
  Subscription,
  TopicSpec,
} from './message-log.port.ts';

/** Where an adapter-level failure happened, for {@link SqliteMessageLogOptions.onError}. */
export interface MessageLogErrorContext {
  readonly groupId: string;
  /** `handler`: a handler rejected (the message is redelivered); `poll`: the consumer loop failed a round. */
  readonly phase: 'handler' | 'poll' | 'retention';
  readonly message?: DeliveredMessage;
}

export interface SqliteMessageLogOptions {
  /** SQLite database file of the log; its directory is created if missing. Several processes may share it. */
  readonly file: string;
  /** How often consumers look for new messages and group changes. Default 50 ms. */
  readonly pollIntervalMs?: number;
  /**
   * How long a consumer's partition lease lasts without renewal (renewed every third of it). A
   * consumer that dies without stopping loses its partitions to the rest of its group this long
   * after its last renewal. Default 10 000 ms.
   */
  readonly leaseMs?: number;
  /** Pause before a message whose handler rejected is delivered again. Default 500 ms. */
  readonly retryDelayMs?: number;
  /**
   * Minimum age of a message before the retention sweep may delete it. A message is deleted only
   * when it is this old AND every group that has committed on its topic has committed past it.
   * Default 7 days.
   */
  readonly retentionMs?: number;
  /** How often this instance runs the retention sweep; 0 turns the periodic sweep off. Default 5 minutes. */
  readonly retentionCheckMs?: number;
  /**
   * Told about handler rejections (the message is redelivered after `retryDelayMs`), failed consumer
   * rounds and failed retention sweeps; the adapter itself keeps going. Default: one line on stderr.
   */
  readonly onError?: (error: unknown, context: MessageLogErrorContext) => void;
}

/** The SQLite message log, with its retention sweep exposed for operators and tests. */
export interface SqliteMessageLog extends MessageLog {
  /** Deletes messages older than `retentionMs` that every committing group has consumed; returns how many. */
  sweepRetention(now?: number): number;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ml_schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    schema TEXT NOT NULL,
    UNIQUE (topic, fingerprint)
  )`,
  `CREATE TABLE IF NOT EXISTS ml_topics (
    name TEXT PRIMARY KEY,
    partitions INTEGER NOT NULL,
    schema_id INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ml_partitions (
    topic TEXT NOT NULL,
    part INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (topic, part)
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS ml_messages (
    topic TEXT NOT NULL,
    part INTEGER NOT NULL,
    msg_offset INTEGER NOT NULL,
    msg_key TEXT NOT NULL,
    value BLOB NOT NULL,
    schema_id INTEGER NOT NULL,
    headers TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    PRIMARY KEY (topic, part, msg_offset)
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS ml_offsets (
    group_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    part INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    committed_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, topic, part)
  ) WITHOUT ROWID`,
  'CREATE INDEX IF NOT EXISTS ml_offsets_topic ON ml_offsets (topic, part)',
  `CREATE TABLE IF NOT EXISTS ml_leases (
    group_id TEXT NOT NULL,
    topic TEXT NOT NULL,
    part INTEGER NOT NULL,
    owner TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, topic, part)
  ) WITHOUT ROWID`,
  'CREATE INDEX IF NOT EXISTS ml_leases_owner ON ml_leases (group_id, owner)',
  `CREATE TABLE IF NOT EXISTS ml_members (
    group_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    topics TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, member_id)
  ) WITHOUT ROWID`,
];

const FETCH_BATCH = 100;

/**
 * Kafka's murmur2 hash (the Java client's `Utils.murmur2`, also kafkajs's default partitioner)
 * of the key's UTF-8 bytes, as a signed 32-bit integer.
 */
export function murmur2(key: string): number {
  const data = Buffer.from(key, 'utf8');
  const m = 0x5bd1e995;
  const length = data.length;
  let h = (0x9747b28c ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    let k = data.readInt32LE(i * 4);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length % 4;
  if (rest === 3) h ^= (data[tail + 2] ?? 0) << 16;
  if (rest >= 2) h ^= (data[tail + 1] ?? 0) << 8;
  if (rest >= 1) {
    h ^= data[tail] ?? 0;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition of `key` among `partitions`, as Kafka's default partitioner computes it. */
export function partitionForKey(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

function defaultOnError(error: unknown, context: MessageLogErrorContext): void {
  const where = context.message
    ? ` on ${context.message.topic}[${context.message.partition}]@${context.message.offset}`
    : '';
  const reason = error instanceof Error ? error.message : String(error);
  console.warn(`message log: ${context.phase} error in group ${context.groupId || '-'}${where}: ${reason}`);
}

/** Publishes in this process wake the consumers of the same file at once instead of at their next poll. */
const wakers = new Map<string, Set<() => void>>();

function notifyPublished(file: string): void {
  for (const wake of wakers.get(file) ?? []) wake();
}

function addWaker(file: string, wake: () => void): () => void {
  let set = wakers.get(file);
  if (!set) {
    set = new Set();
    wakers.set(file, set);
  }
  set.add(wake);
  return () => {
    set.delete(wake);
    if (set.size === 0) wakers.delete(file);
  };
}

interface TopicRow {
  name: string;
  partitions: number;
  schema_id: number;
}

interface MessageRow {
  msg_offset: number;
  msg_key: string;
  value: Buffer;
  schema_id: number;
  headers: string;
  timestamp: number;
}

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
 * - Retention: see {@link SqliteMessageLogOptions.retentionMs}. `lag` counts, per partition, from the
 *   group's committed offset (or the oldest retained message where it has none) to the end.
 */
export function createSqliteMessageLog(options: SqliteMessageLogOptions): SqliteMessageLog {
  const file = options.file === ':memory:' ? `:memory:${randomUUID()}` : path.resolve(options.file);
  const pollIntervalMs = options.pollIntervalMs ?? 50;
  const leaseMs = options.leaseMs ?? 10_000;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const retentionMs = options.retentionMs ?? 7 * 24 * 3600 * 1000;
  const retentionCheckMs = options.retentionCheckMs ?? 5 * 60 * 1000;
  const reportError = options.onError ?? defaultOnError;
  const onError = (error: unknown, context: MessageLogErrorContext): void => {
    try {
      reportError(error, context);
    } catch {
      // A failing reporter must not stop the consumer.
    }
  };

  const db: Database = openDatabase(options.file);
  migrate(db, 'message-log-001', MIGRATIONS);

  const q = {
    topic: db.prepare<[string], TopicRow>('SELECT name, partitions, schema_id FROM ml_topics WHERE name = ?'),
    schemaById: db.prepare<[number], { schema: string }>('SELECT schema FROM ml_schemas WHERE id = ?'),
    schemaByFingerprint: db.prepare<[string, string], { id: number }>(
      'SELECT id FROM ml_schemas WHERE topic = ? AND fingerprint = ?',
    ),
    insertSchema: db.prepare<[string, string, string]>(
      'INSERT INTO ml_schemas (topic, fingerprint, schema) VALUES (?, ?, ?)',
    ),
    insertTopic: db.prepare<[string, number, number, number]>(
      'INSERT INTO ml_topics (name, partitions, schema_id, created_at) VALUES (?, ?, ?, ?)',
    ),
    setTopicSchema: db.prepare<[number, string]>('UPDATE ml_topics SET schema_id = ? WHERE name = ?'),
    insertPartition: db.prepare<[string, number]>(
      'INSERT OR IGNORE INTO ml_partitions (topic, part, next_offset) VALUES (?, ?, 0)',
    ),
    heads: db.prepare<[string], { part: number; next_offset: number }>(
      'SELECT part, next_offset FROM ml_partitions WHERE topic = ?',
    ),
    head: db.prepare<[string, number], { next_offset: number }>(
      'SELECT next_offset FROM ml_partitions WHERE topic = ? AND part = ?',
    ),
    setHead: db.prepare<[number, string, number]>(
      'UPDATE ml_partitions SET next_offset = ? WHERE topic = ? AND part = ?',
    ),
    insertMessage: db.prepare<[string, number, number, string, Buffer, number, string, number]>(
      `INSERT INTO ml_messages (topic, part, msg_offset, msg_key, value, schema_id, headers, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    lowWatermark: db.prepare<[string, number], { low: number | null }>(
      'SELECT MIN(msg_offset) AS low FROM ml_messages WHERE topic = ? AND part = ?',
    ),
    fetch: db.prepare<[string, number, number, number], MessageRow>(
      `SELECT msg_offset, msg_key, value, schema_id, headers, timestamp FROM ml_messages
       WHERE topic = ? AND part = ? AND msg_offset >= ? ORDER BY msg_offset LIMIT ?`,
    ),
    committed: db.prepare<[string, string, number], { next_offset: number }>(
      'SELECT next_offset FROM ml_offsets WHERE group_id = ? AND topic = ? AND part = ?',
    ),
    groupOffsets: db.prepare<[string, string], { part: number; next_offset: number }>(
      'SELECT part, next_offset FROM ml_offsets WHERE group_id = ? AND topic = ?',
    ),
    commit: db.prepare<[string, string, number, number, number]>(
      `INSERT INTO ml_offsets (group_id, topic, part, next_offset, committed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (group_id, topic, part) DO UPDATE SET next_offset = excluded.next_offset, committed_at = excluded.committed_at`,
    ),
    lease: db.prepare<[string, string, number], { owner: string; expires_at: number }>(
      'SELECT owner, expires_at FROM ml_leases WHERE group_id = ? AND topic = ? AND part = ?',
    ),
    acquire: db.prepare<[string, string, number, string, number, number]>(
      `INSERT INTO ml_leases (group_id, topic, part, owner, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (group_id, topic, part) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ml_leases.expires_at <= ? OR ml_leases.owner = excluded.owner`,
    ),
    renewLeases: db.prepare<[number, string, string]>(
      'UPDATE ml_leases SET expires_at = ? WHERE group_id = ? AND owner = ?',
    ),
    ownedLeases: db.prepare<[string, string], { topic: string; part: number }>(
      'SELECT topic, part FROM ml_leases WHERE group_id = ? AND owner = ?',
    ),
    releaseLease: db.prepare<[string, string, number, string]>(
      'DELETE FROM ml_leases WHERE group_id = ? AND topic = ? AND part = ? AND owner = ?',
    ),
    releaseAll: db.prepare<[string, string]>('DELETE FROM ml_leases WHERE group_id = ? AND owner = ?'),
    upsertMember: db.prepare<[string, string, string, number]>(
      `INSERT INTO ml_members (group_id, member_id, topics, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (group_id, member_id) DO UPDATE SET expires_at = excluded.expires_at`,
    ),
    liveMembers: db.prepare<[string, number], { member_id: string; topics: string }>(
      'SELECT member_id, topics FROM ml_members WHERE group_id = ? AND expires_at > ?',
    ),
    deleteMember: db.prepare<[string, string]>('DELETE FROM ml_members WHERE group_id = ? AND member_id = ?'),
    deleteDeadMembers: db.prepare<[number]>('DELETE FROM ml_members WHERE expires_at < ?'),
    deleteDeadLeases: db.prepare<[number]>('DELETE FROM ml_leases WHERE expires_at < ?'),
    allPartitions: db.prepare<[], { topic: string; part: number }>('SELECT topic, part FROM ml_partitions'),
    topicGroups: db.prepare<[string], { group_id: string }>('SELECT DISTINCT group_id FROM ml_offsets WHERE topic = ?'),
    partitionOffsets: db.prepare<[string, number], { next_offset: number }>(
      'SELECT next_offset FROM ml_offsets WHERE topic = ? AND part = ?',
    ),
    deleteOld: db.prepare<[string, number, number, number]>(
      'DELETE FROM ml_messages WHERE topic = ? AND part = ? AND msg_offset < ? AND timestamp < ?',
    ),
  };

  const types = new Map<number, AvscType>();
  function typeOf(schemaId: number): AvscType {
    let type = types.get(schemaId);
    if (!type) {
      const row = q.schemaById.get(schemaId);
      if (!row) throw new KbError('internal-error', `Schema ${schemaId} of the message log is missing`);
      type = avro.Type.forSchema(JSON.parse(row.schema) as AvscSchema);
      types.set(schemaId, type);
    }
    return type;
  }

  let closed = false;
  const subscriptions = new Set<{ closeAbruptly(): void }>();

  function assertOpen(): void {
    if (closed) throw new KbError('service-unavailable', 'The message log is closed');
  }

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

  const removeTopics = db.transaction((names: readonly string[]) => {
    for (const name of names) {
      for (const table of ['ml_messages', 'ml_partitions', 'ml_offsets', 'ml_leases']) {
        db.prepare(`DELETE FROM ${table} WHERE topic = ?`).run(name);
      }
      db.prepare('DELETE FROM ml_topics WHERE name = ?').run(name);
      db.prepare('DELETE FROM ml_schemas WHERE topic = ?').run(name);
    }
  });

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
            if (!closed) sweepRetention();
          } catch (error) {
            onError(error, { groupId: '', phase: 'retention' });
          }
        }, retentionCheckMs)
      : null;
  retentionTimer?.unref();

  async function subscribe(opts: SubscribeOptions): Promise<Subscription> {
    assertOpen();
    const { groupId, handler } = opts;
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
      return { topic, partition, position, worker: null, revoking: false, lost: false };
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

    async function work(st: PartitionState): Promise<void> {
      while (active(st)) {
        const rows = q.fetch.all(st.topic, st.partition, st.position, FETCH_BATCH);
        if (rows.length === 0) return;
        for (const row of rows) {
          if (!active(st)) return;
          for (;;) {
            let message: DeliveredMessage | undefined;
            try {
              message = decode(st.topic, st.partition, row);
              await handler(message);
              break;
            } catch (error) {
              onError(error, message ? { groupId, phase: 'handler', message } : { groupId, phase: 'handler' });
              await pause(retryDelayMs);
              if (!active(st)) return;
            }
          }
          if (abandoned || !commit.immediate(st, row.msg_offset + 1)) {
            st.lost = true;
            return;
          }
          st.position = row.msg_offset + 1;
        }
      }
    }

    function startWorker(st: PartitionState): void {
      st.worker = work(st)
        .catch((error: unknown) => {
          onError(error, { groupId, phase: 'poll' });
        })
        .finally(() => {
          st.worker = null;
          if (abandoned) return;
          try {
            if (st.lost) held.delete(stateKey(st.topic, st.partition));
            else if (st.revoking) release(st);
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
          if (st.topic !== topic || st.worker || !active(st)) continue;
          if ((heads.get(st.partition) ?? 0) > st.position) startWorker(st);
        }
      }
    }

    function runTick(): void {
      timer = null;
      if (halted) return;
      try {
        tick();
      } catch (error) {
        onError(error, { groupId, phase: 'poll' });
      }
      schedule(pollIntervalMs);
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

    const handle = {
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

  return {
    kind: 'sqlite',

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
      notifyPublished(file);
    },

    subscribe,

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

    async deleteTopics(names) {
      assertOpen();
      if (names.length > 0) removeTopics.immediate(names);
    },

    sweepRetention,

    async ping() {
      assertOpen();
      db.prepare('SELECT 1').get();
    },

    async close() {
      if (closed) return;
      for (const subscription of [...subscriptions]) subscription.closeAbruptly();
      closed = true;
      if (retentionTimer) clearInterval(retentionTimer);
      db.close();
    },
  };
}
