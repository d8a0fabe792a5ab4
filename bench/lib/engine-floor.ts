/**
 * The engines' floor: what each engine needs at least to hold the final state a pipeline run left,
 * written straight to it by the bench with the engine's best bulk path and no pipeline.
 *
 * After a run of the distributed pipeline (its service stopped, so nothing else writes), the bench
 * reads what the run stored — the document store's five indexes, the bucket's objects, the topics'
 * messages, the audit rows — and then, while it measures each engine's process tree, writes the
 * same into new names beside it:
 * - OpenSearch: the same records (chunks with their vectors, documents, versions, vector-cache
 *   entries, the index model) into indexes with the service's settings and the run's mappings,
 *   `_bulk` 500 actions a request, then one refresh of each index;
 * - MinIO: the same objects, the same keys, 16 puts in flight;
 * - Kafka: the same messages (keys, Avro values, headers) to the same partitions of topics with the
 *   same partition counts, 1,000 messages a produce request (acks all, as the service's producer);
 * - ClickHouse: the same audit rows into a table of the same definition, 1,000 rows an insert.
 * Each engine is written alone in turn, and its CPU counted over its own step only.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { Client as MinioClient } from 'minio';
import type { Config, DistributedConfig } from '../../core/config/config.ts';
import { indexDefinitions, indexNames } from '../../core/ports/document-store/opensearch/opensearch-mappings.ts';
import { wipeDistributed } from '../../support/distributed-wipe.ts';
import { sampleEngineCpu } from './machine-cpu.ts';

/** Actions in one `_bulk` request. */
const BULK_ACTIONS = 500;
/** Messages in one produce request. */
const PRODUCE_BATCH = 1000;
/** Rows in one ClickHouse insert. */
const INSERT_ROWS = 1000;
/** Object puts in flight. */
const PUTS_IN_FLIGHT = 16;

/** One engine's floor: its CPU seconds over its step and the requests the bench sent it. */
export interface EngineFloorPart {
  readonly cpuSeconds: number;
  /** Wall-clock seconds of its step. */
  readonly seconds: number;
  readonly requests: number;
  /** What was written: records, objects, messages or rows. */
  readonly items: number;
}

/** The floor of each engine that `deploy/native/` runs, by the name of its pid file. */
export type EngineFloor = ReadonlyMap<string, EngineFloorPart>;

type Json = Record<string, unknown>;

interface KafkaRecord {
  readonly topic: string;
  readonly partition: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, Buffer | string | undefined>;
}

/** Measures the floor of the final state `config`'s instance holds; removes what it wrote. */
export async function measureEngineFloor(config: DistributedConfig, enginePids: string): Promise<EngineFloor> {
  const id = randomBytes(4).toString('hex');
  const floor: DistributedConfig = {
    ...config,
    topicPrefix: `floor-${id}.`,
    opensearch: { ...config.opensearch, indexPrefix: `floor-${id}` },
    clickhouse: { ...config.clickhouse, database: `floor_${id}` },
    s3: { ...config.s3, bucket: `floor-${id}` },
  };
  const parts = new Map<string, EngineFloorPart>();
  const measured = async (engine: string, write: () => Promise<{ requests: number; items: number }>) => {
    const before = sampleEngineCpu(enginePids).get(engine);
    const started = performance.now();
    const { requests, items } = await write();
    const seconds = (performance.now() - started) / 1000;
    const after = sampleEngineCpu(enginePids).get(engine);
    if (before !== undefined && after !== undefined) {
      parts.set(engine, { cpuSeconds: after - before, seconds, requests, items });
    }
  };
  try {
    const opensearch = await readOpenSearch(config, floor);
    await measured('opensearch', () => writeOpenSearch(floor, opensearch));
    const objects = await readObjects(config);
    await measured('minio', () => writeObjects(floor, objects));
    const messages = await readMessages(config, floor);
    await measured('kafka', () => writeMessages(floor, messages));
    const rows = await readAudit(config, floor);
    await measured('clickhouse', () => writeAudit(floor, rows));
    return parts;
  } finally {
    await wipeDistributed(floor as Config, `${config.kafka.clientId}-floor`);
  }
}

// ---------------------------------------------------------------------------------------------
// OpenSearch

interface IndexCopy {
  readonly name: string;
  readonly records: ReadonlyArray<{ readonly id: string; readonly source: Json }>;
}

async function openSearch<T>(config: DistributedConfig, method: string, path: string, body?: unknown): Promise<T> {
  const ndjson = typeof body === 'string';
  const response = await fetch(`${config.opensearch.url}${path}`, {
    method,
    headers: { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' },
    ...(body === undefined ? {} : { body: ndjson ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`OpenSearch ${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Reads the store's five indexes and creates their floor copies (settings and mappings), empty. */
async function readOpenSearch(config: DistributedConfig, floor: DistributedConfig): Promise<IndexCopy[]> {
  const from = indexNames(config.opensearch.indexPrefix);
  const to = indexNames(floor.opensearch.indexPrefix);
  const definitions = indexDefinitions(to, {
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    maxResultWindow: 10_000,
    documentsRefreshInterval: `${config.opensearch.documentsRefreshMs}ms`,
  });
  const copies: IndexCopy[] = [];
  for (const role of Object.keys(from) as Array<keyof typeof from>) {
    const source = from[role];
    const target = to[role];
    const definition = definitions.find((d) => d.name === target);
    // The run's mapping: the service's, with the vector field its index model added.
    const mapping = await openSearch<Record<string, { mappings: Json }>>(config, 'GET', `/${source}/_mapping`);
    await openSearch(config, 'PUT', `/${target}`, {
      settings: definition?.settings ?? {},
      mappings: mapping[source]?.mappings ?? {},
    });
    const records: Array<{ id: string; source: Json }> = [];
    let after: unknown[] | undefined;
    for (;;) {
      const page = await openSearch<{ hits: { hits: Array<{ _id: string; _source: Json; sort: unknown[] }> } }>(
        config,
        'POST',
        `/${source}/_search`,
        { size: 1000, sort: [{ _id: 'asc' }], ...(after ? { search_after: after } : {}) },
      );
      const hits = page.hits.hits;
      for (const hit of hits) records.push({ id: hit._id, source: hit._source });
      if (hits.length < 1000) break;
      after = hits.at(-1)?.sort;
    }
    copies.push({ name: target, records });
  }
  return copies;
}

async function writeOpenSearch(floor: DistributedConfig, copies: readonly IndexCopy[]) {
  let requests = 0;
  let items = 0;
  for (const copy of copies) {
    for (let at = 0; at < copy.records.length; at += BULK_ACTIONS) {
      const lines = copy.records
        .slice(at, at + BULK_ACTIONS)
        .flatMap((r) => [JSON.stringify({ index: { _index: copy.name, _id: r.id } }), JSON.stringify(r.source)]);
      const answer = await openSearch<{ errors: boolean; items: unknown[] }>(
        floor,
        'POST',
        '/_bulk',
        `${lines.join('\n')}\n`,
      );
      if (answer.errors) throw new Error(`the floor's _bulk into ${copy.name} refused items`);
      requests += 1;
      items += answer.items.length;
    }
  }
  await openSearch(floor, 'POST', `/${copies.map((c) => c.name).join(',')}/_refresh`);
  return { requests: requests + 1, items };
}

// ---------------------------------------------------------------------------------------------
// MinIO

function minio(config: DistributedConfig): MinioClient {
  const endpoint = new URL(config.s3.endpoint);
  return new MinioClient({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port) || (endpoint.protocol === 'https:' ? 443 : 80),
    useSSL: endpoint.protocol === 'https:',
    accessKey: config.s3.accessKey,
    secretKey: config.s3.secretKey,
    region: config.s3.region,
  });
}

async function readObjects(config: DistributedConfig): Promise<Array<{ key: string; bytes: Buffer }>> {
  const client = minio(config);
  const keys: string[] = [];
  for await (const item of client.listObjectsV2(config.s3.bucket, '', true)) if (item.name) keys.push(item.name);
  const objects: Array<{ key: string; bytes: Buffer }> = [];
  await inFlight(keys, PUTS_IN_FLIGHT, async (key) => {
    const stream = await client.getObject(config.s3.bucket, key);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    objects.push({ key, bytes: Buffer.concat(chunks) });
  });
  return objects;
}

async function writeObjects(floor: DistributedConfig, objects: ReadonlyArray<{ key: string; bytes: Buffer }>) {
  const client = minio(floor);
  await client.makeBucket(floor.s3.bucket, floor.s3.region);
  await inFlight(objects, PUTS_IN_FLIGHT, (o) => client.putObject(floor.s3.bucket, o.key, o.bytes, o.bytes.length));
  return { requests: objects.length + 1, items: objects.length };
}

async function inFlight<T>(items: readonly T[], limit: number, run: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Kafka

function kafkaOf(config: DistributedConfig, suffix: string): Kafka {
  return new Kafka({
    clientId: `${config.kafka.clientId}-floor-${suffix}`,
    brokers: [...config.kafka.brokers],
    logLevel: logLevel.NOTHING,
  });
}

/** Reads every message of the instance's topics and creates the floor's topics (same partitions). */
async function readMessages(config: DistributedConfig, floor: DistributedConfig): Promise<KafkaRecord[]> {
  const kafka = kafkaOf(config, 'read');
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(config.topicPrefix));
    const ends = new Map<string, number>();
    const partitions = new Map<string, number>();
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(topic);
      partitions.set(topic, offsets.length);
      for (const o of offsets) ends.set(`${topic}:${o.partition}`, Number(o.high));
    }
    await admin.createTopics({
      waitForLeaders: true,
      topics: topics.map((topic) => ({
        topic: floor.topicPrefix + topic.slice(config.topicPrefix.length),
        numPartitions: partitions.get(topic) ?? 1,
        replicationFactor: 1,
      })),
    });
    const wanted = [...ends.values()].reduce((sum, n) => sum + n, 0);
    const records: KafkaRecord[] = [];
    if (wanted === 0) return records;
    const consumer = kafka.consumer({ groupId: `floor-read-${randomBytes(4).toString('hex')}` });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`read ${records.length} of ${wanted} messages in 120 s`)),
          120_000,
        );
        consumer
          .run({
            eachBatch: async ({ batch }) => {
              const end = ends.get(`${batch.topic}:${batch.partition}`) ?? 0;
              for (const m of batch.messages) {
                if (Number(m.offset) >= end) continue;
                records.push({
                  topic: floor.topicPrefix + batch.topic.slice(config.topicPrefix.length),
                  partition: batch.partition,
                  key: m.key,
                  value: m.value,
                  headers: (m.headers ?? {}) as KafkaRecord['headers'],
                });
              }
              if (records.length >= wanted) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return records;
  } finally {
    await admin.disconnect();
  }
}

async function writeMessages(floor: DistributedConfig, records: readonly KafkaRecord[]) {
  const producer = kafkaOf(floor, 'write').producer({ idempotent: true, allowAutoTopicCreation: false });
  await producer.connect();
  let requests = 0;
  try {
    for (let at = 0; at < records.length; at += PRODUCE_BATCH) {
      const byTopic = new Map<string, KafkaRecord[]>();
      for (const r of records.slice(at, at + PRODUCE_BATCH)) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r]);
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({
          topic,
          messages: messages.map((m) => ({
            partition: m.partition,
            key: m.key,
            value: m.value,
            headers: m.headers,
          })),
        })),
      });
      requests += 1;
    }
  } finally {
    await producer.disconnect();
  }
  return { requests, items: records.length };
}

// ---------------------------------------------------------------------------------------------
// ClickHouse

async function clickHouse(config: DistributedConfig, query: string, body?: string): Promise<string> {
  const url = new URL(`${config.clickhouse.url}/`);
  url.searchParams.set('query', query);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'X-ClickHouse-User': config.clickhouse.user, 'X-ClickHouse-Key': config.clickhouse.password },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`ClickHouse ${query.slice(0, 80)}: ${response.status} ${text.slice(0, 300)}`);
  return text;
}

/** Reads the audit rows and creates the floor's audit table (the same definition). */
async function readAudit(config: DistributedConfig, floor: DistributedConfig): Promise<string[]> {
  const from = `\`${config.clickhouse.database}\`.audit_log`;
  const definition = (await clickHouse(config, `SHOW CREATE TABLE ${from} FORMAT TabSeparatedRaw`)).trim();
  await clickHouse(floor, `CREATE DATABASE IF NOT EXISTS \`${floor.clickhouse.database}\``);
  await clickHouse(
    floor,
    definition.replace(/^CREATE TABLE \S+/, `CREATE TABLE \`${floor.clickhouse.database}\`.audit_log`),
  );
  const rows = await clickHouse(config, `SELECT * FROM ${from} FORMAT JSONEachRow`);
  return rows.split('\n').filter((line) => line.length > 0);
}

async function writeAudit(floor: DistributedConfig, rows: readonly string[]) {
  let requests = 0;
  for (let at = 0; at < rows.length; at += INSERT_ROWS) {
    await clickHouse(
      floor,
      `INSERT INTO \`${floor.clickhouse.database}\`.audit_log FORMAT JSONEachRow`,
      rows.slice(at, at + INSERT_ROWS).join('\n'),
    );
    requests += 1;
  }
  return { requests, items: rows.length };
}
