import type { Database } from '../../sqlite/open-database.ts';

/**
 * Schema of the SQLite message log, applied through `migrate` as `message-log-001`.
 *
 * - `ml_schemas`: every schema a topic has had, by fingerprint; messages keep the id they were written with.
 * - `ml_topics`: a topic's partition count and current schema.
 * - `ml_partitions`: each partition's next offset (its end).
 * - `ml_messages`: the messages, Avro binary, by (topic, partition, offset).
 * - `ml_offsets`: each group's committed (next) offset per partition.
 * - `ml_leases`: which group member works a partition, until when.
 * - `ml_members`: live members of each group and their topics, until when.
 */
export const MESSAGE_LOG_MIGRATIONS: readonly string[] = [
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

export interface TopicRow {
  name: string;
  partitions: number;
  schema_id: number;
}

export interface MessageRow {
  msg_offset: number;
  msg_key: string;
  value: Buffer;
  schema_id: number;
  headers: string;
  timestamp: number;
}

/** The prepared statements of the log, shared by its publisher, consumers, admin and retention sweep. */
export type LogStatements = ReturnType<typeof prepareLogStatements>;

export function prepareLogStatements(db: Database) {
  return {
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
}
