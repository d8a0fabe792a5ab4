import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../core/config/config.ts';
import { type DocumentUploaded, eventSchema } from '../../core/events/events.ts';
import { createKafkaMessageLog, type KafkaMessageLogOptions } from '../../core/ports/message-log/kafka.adapter.ts';
import type { KafkaLogSink } from '../../core/ports/message-log/kafka-logging.ts';
import type {
  DeliveredMessage,
  MessageLog,
  MessageLogAdmin,
  Subscription,
} from '../../core/ports/message-log/message-log.port.ts';
import { CONTRACT_EVENT_SCHEMA, describeMessageLogContract } from '../contract/message-log.contract.ts';
import { describeMessageLogTailContract } from '../contract/message-log-tail.contract.ts';

const config = loadConfig();
if (config.runtime !== 'distributed' || config.schemaRegistryUrl === null) {
  throw new Error(
    'The Kafka message-log tests need KB_RUNTIME=distributed, KB_KAFKA_BROKERS and KB_SCHEMA_REGISTRY_URL: ' +
      'start the engines with deploy/native/up kafka schema-registry and load eval "$(deploy/native/env)"',
  );
}
const brokers = config.kafka.brokers;
const registryUrl: string = config.schemaRegistryUrl.replace(/\/+$/, '');

/** Keeps kafkajs and adapter warnings out of the test output; errors still show. */
const testLogger: KafkaLogSink = {
  warn() {},
  error(obj, msg) {
    console.error(`[kafka test] ${msg ?? ''} ${JSON.stringify(obj)}`);
  },
};

function options(overrides: Partial<KafkaMessageLogOptions> = {}): KafkaMessageLogOptions {
  return {
    brokers,
    clientId: `kb-test-${randomUUID().slice(0, 8)}`,
    schemaRegistryUrl: registryUrl,
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 1_000,
    logger: testLogger,
    ...overrides,
  };
}

describeMessageLogContract('kafka', async () => ({
  log: await createKafkaMessageLog(options()),
  makeAnother: () => createKafkaMessageLog(options()),
  async cleanup() {
    // The contract deletes its topics (and with them their subjects) through the log.
  },
}));

describeMessageLogTailContract('kafka', async () => ({
  log: await createKafkaMessageLog(options()),
  async cleanup() {},
}));

async function registryGet(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${registryUrl}${path}`);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
}

function uploadedEvent(): DocumentUploaded {
  return {
    event_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    trace_id: randomUUID(),
    document_id: randomUUID(),
    workspace_id: 'default',
    version: 3,
    storage_key: `uploads/default/${randomUUID()}/3/${'quarterly-report-final-'.repeat(8)}.pdf`,
    mime_type: 'application/pdf',
    size_bytes: 52_428_800,
    content_hash: `sha256:${'ab'.repeat(32)}`,
    name: `${'Quarterly report (final) '.repeat(10)}.pdf`,
  };
}

describe('kafka message log', () => {
  let log: MessageLog & MessageLogAdmin;
  const topics: string[] = [];
  const extra: MessageLog[] = [];
  const newTopic = () => {
    const name = `t-${randomUUID()}`;
    topics.push(name);
    return name;
  };

  /** Another log on the same brokers with `overrides`, closed after the tests. */
  async function anotherLog(overrides: Partial<KafkaMessageLogOptions>): ReturnType<typeof createKafkaMessageLog> {
    const another = await createKafkaMessageLog(options(overrides));
    extra.push(another);
    return another;
  }

  /** Subscribes a new group to `topic` through the main log; `seen` collects every message delivered. */
  async function collect(topic: string): Promise<{ seen: DeliveredMessage[]; subscription: Subscription }> {
    const seen: DeliveredMessage[] = [];
    const subscription = await log.subscribe({
      groupId: `g-${randomUUID()}`,
      topics: [topic],
      handler: async (m) => {
        seen.push(m);
      },
    });
    return { seen, subscription };
  }

  beforeAll(async () => {
    log = await createKafkaMessageLog(options());
  });

  afterAll(async () => {
    for (const other of extra) await other.close().catch(() => undefined);
    await log.deleteTopics(topics).catch(() => undefined);
    await log.close();
  });

  it('registers <topic>-value with BACKWARD compatibility and enforces it on later schemas', async () => {
    const topic = newTopic();
    const subject = `${topic}-value`;
    await log.ensureTopics([{ name: topic, partitions: 3, schema: eventSchema('uploaded') }]);

    const subjects = await registryGet('/subjects');
    expect(subjects.body).toContain(subject);
    expect((await registryGet(`/config/${subject}`)).body).toEqual({ compatibilityLevel: 'BACKWARD' });
    const latest = (await registryGet(`/subjects/${subject}/versions/latest`)).body as { schema: string };
    expect(JSON.parse(latest.schema)).toMatchObject({ name: 'DocumentUploaded', namespace: 'kb.events.v1' });

    // A field with a default is a backward-compatible change; a new field without one is not.
    const fields = eventSchema('uploaded').fields as object[];
    const evolved = {
      ...eventSchema('uploaded'),
      fields: [...fields, { name: 'source', type: 'string', default: '' }],
    };
    await log.ensureTopics([{ name: topic, partitions: 3, schema: evolved }]);
    expect((await registryGet(`/subjects/${subject}/versions`)).body).toHaveLength(2);
    const breaking = { ...eventSchema('uploaded'), fields: [...fields, { name: 'owner', type: 'string' }] };
    await expect(log.ensureTopics([{ name: topic, partitions: 3, schema: breaking }])).rejects.toMatchObject({
      code: 'conflict',
      retriable: false,
    });

    await log.deleteTopics([topic]);
    expect((await registryGet(`/subjects/${subject}/versions`)).status).toBe(404);
  });

  it('lets six clients ensure the same new topics at the same moment, and each can publish at once', async () => {
    const names = [newTopic(), newTopic(), newTopic()];
    const specs = names.map((name) => ({ name, partitions: 3, schema: eventSchema('uploaded') }));
    const others = await Promise.all(Array.from({ length: 5 }, () => anotherLog({})));
    await Promise.all([log, ...others].map((client) => client.ensureTopics(specs)));

    for (const name of names) {
      expect((await registryGet(`/config/${name}-value`)).body).toEqual({ compatibilityLevel: 'BACKWARD' });
      expect((await registryGet(`/subjects/${name}-value/versions`)).body).toHaveLength(1);
    }
    const event = uploadedEvent();
    await Promise.all(
      others.map((client, i) =>
        client.publish(names[i % names.length] as string, [{ key: event.document_id, value: { ...event } }]),
      ),
    );
  });

  it('refuses a subject whose compatibility level another party set, naming both levels', async () => {
    const topic = newTopic();
    await log.ensureTopics([{ name: topic, partitions: 1, schema: eventSchema('uploaded') }]);
    const strict = await anotherLog({ compatibility: 'FULL' });
    await expect(
      strict.ensureTopics([{ name: topic, partitions: 1, schema: eventSchema('uploaded') }]),
    ).rejects.toMatchObject({
      code: 'config-invalid',
      message: expect.stringMatching(new RegExp(`Subject ${topic}-value has compatibility BACKWARD .* sets FULL`)),
    });
  });

  it('writes the Confluent wire format with the registered id, and a typical event stays far below 1 MB', async () => {
    const topic = newTopic();
    await log.ensureTopics([{ name: topic, partitions: 2, schema: eventSchema('uploaded') }]);
    const event = uploadedEvent();
    await log.publish(topic, [
      { key: event.document_id, value: { ...event }, headers: { 'trace-id': event.trace_id } },
    ]);

    // Read the raw record with a plain client, as any other Kafka consumer would.
    const kafka = new Kafka({ clientId: 'kb-test-raw', brokers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `g-raw-${randomUUID()}`, maxWaitTimeInMs: 500 });
    const raw: Buffer[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value) raw.push(message.value);
        },
      });
      await vi.waitFor(() => expect(raw).toHaveLength(1), { timeout: 30_000, interval: 50 });
    } finally {
      await consumer.disconnect();
    }
    const bytes = raw[0] as Buffer;
    const latest = (await registryGet(`/subjects/${topic}-value/versions/latest`)).body as { id: number };
    expect(bytes[0]).toBe(0);
    expect(bytes.readInt32BE(1)).toBe(latest.id);
    const decoded = await new SchemaRegistry({ host: registryUrl }).decode(bytes);
    expect({ ...decoded }).toEqual(event);
    // Claim check: the event carries references, never content. Kafka's default limit is 1 MB.
    expect(bytes.length).toBeLessThan(4 * 1024);
  });

  it('rejects publishing to or subscribing to a topic without schema or topic with not-found', async () => {
    const missing = `t-${randomUUID()}`;
    await expect(log.publish(missing, [{ key: 'k', value: { id: 'x' } }])).rejects.toMatchObject({
      code: 'not-found',
    });
    await expect(
      log.subscribe({ groupId: `g-${randomUUID()}`, topics: [missing], handler: async () => undefined }),
    ).rejects.toMatchObject({ code: 'not-found' });
  });

  it('reports an unreachable broker or registry as retriable engine-unavailable', async () => {
    // Connection errors are expected here; keep them out of the output.
    const silent: KafkaLogSink = { warn() {}, error() {} };
    const noBroker = await anotherLog({
      brokers: ['127.0.0.1:1'],
      connectionTimeoutMs: 500,
      pingTimeoutMs: 3_000,
      logger: silent,
    });
    await expect(noBroker.ping()).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });

    const noRegistry = await anotherLog({ schemaRegistryUrl: 'http://127.0.0.1:1/apis/ccompat/v7', logger: silent });
    await expect(noRegistry.ping()).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });
    await expect(
      noRegistry.ensureTopics([{ name: `t-${randomUUID()}`, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]),
    ).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });
    await expect(
      noRegistry.publish(`t-${randomUUID()}`, [{ key: 'k', value: { id: 'x', seq: 1, size: 1, note: null } }]),
    ).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });
  });

  it('decodes every message with the schema it was written with after the topic schema evolves', async () => {
    const topic = newTopic();
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    await log.publish(topic, [{ key: 'k', value: { id: 'v1', seq: 1, size: 1, note: null } }]);
    const evolved = {
      ...CONTRACT_EVENT_SCHEMA,
      fields: [...(CONTRACT_EVENT_SCHEMA.fields as object[]), { name: 'extra', type: 'string', default: '' }],
    };
    await log.ensureTopics([{ name: topic, partitions: 1, schema: evolved }]);
    await log.publish(topic, [{ key: 'k', value: { id: 'v2', seq: 2, size: 2, note: null, extra: 'more' } }]);
    await expect(
      log.publish(topic, [{ key: 'k', value: { id: 'v2', seq: 2, size: 2, note: null, extra: 5 } }]),
    ).rejects.toMatchObject({ code: 'invalid-event' });
    const { seen, subscription } = await collect(topic);
    await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 30_000 });
    await subscription.stop();
    expect(seen[0]?.value).toEqual({ id: 'v1', seq: 1, size: 1, note: null });
    expect(seen[1]?.value).toEqual({ id: 'v2', seq: 2, size: 2, note: null, extra: 'more' });
  });

  it('skips and reports a record that is not registry-encoded Avro instead of blocking its partition', async () => {
    const topic = newTopic();
    const errors: string[] = [];
    const watched = await anotherLog({ logger: { warn() {}, error: (_obj, msg) => errors.push(msg ?? '') } });
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    const kafka = new Kafka({ clientId: 'kb-test-raw', brokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    try {
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'k', value: '{"id":"plain json"}' }] });
    } finally {
      await producer.disconnect();
    }
    await log.publish(topic, [{ key: 'k', value: { id: 'after-garbage', seq: 1, size: 1, note: null } }]);
    const groupId = `g-${randomUUID()}`;
    const seen: string[] = [];
    const subscription = await watched.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        seen.push(String(m.value.id));
      },
    });
    await vi.waitFor(() => expect(seen).toEqual(['after-garbage']), { timeout: 30_000 });
    await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), { timeout: 30_000 });
    await subscription.stop();
    expect(errors).toContain('skipping a message that cannot be decoded');
  });

  it('keeps the partition of a handler that runs longer than the session timeout (no second delivery)', async () => {
    const topic = newTopic();
    const patient = await anotherLog({ sessionTimeoutMs: 6_000, heartbeatIntervalMs: 1_000 });
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    const calls: string[] = [];
    const groupId = `g-${randomUUID()}`;
    const subscription = await patient.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        calls.push(String(m.value.id));
        if (m.value.id === 'slow') await new Promise((resolve) => setTimeout(resolve, 9_000));
      },
    });
    await log.publish(topic, [{ key: 'k', value: { id: 'slow', seq: 1, size: 1, note: null } }]);
    await vi.waitFor(() => expect(calls).toContain('slow'), { timeout: 30_000 });
    await log.publish(topic, [{ key: 'k', value: { id: 'after', seq: 2, size: 2, note: null } }]);
    await vi.waitFor(() => expect(calls).toContain('after'), { timeout: 60_000, interval: 100 });
    await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), { timeout: 30_000 });
    await subscription.stop();
    expect(calls).toEqual(['slow', 'after']);
  }, 120_000);

  it('handles other documents of a partition while one document is slow, and keeps each document in order', async () => {
    const topic = newTopic();
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const groupId = `g-${randomUUID()}`;
    const subscription = await log.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        calls.push(String(m.value.id));
        if (m.value.id === 'slow-1') await released;
      },
    });
    const value = (id: string, seq: number) => ({ id, seq, size: 1, note: null });
    await log.publish(topic, [
      { key: 'slow', value: value('slow-1', 1) },
      { key: 'slow', value: value('slow-2', 2) },
      ...Array.from({ length: 6 }, (_, i) => ({ key: `quick-${i}`, value: value(`quick-${i}`, 3 + i) })),
    ]);
    // Every other document of the partition is handled while the first one is still running…
    await vi.waitFor(() => expect(calls.filter((id) => id.startsWith('quick-'))).toHaveLength(6), {
      timeout: 30_000,
    });
    // …but the slow document's next event waits for it, and nothing is committed past it.
    expect(calls).not.toContain('slow-2');
    expect(await log.lag(groupId, topic)).toBeNull(); // the group has committed nothing yet
    release();
    await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), { timeout: 30_000 });
    await subscription.stop();
    expect(calls.filter((id) => id.startsWith('slow-'))).toEqual(['slow-1', 'slow-2']);
    expect(calls.indexOf('slow-2')).toBeGreaterThan(calls.indexOf('quick-5'));
  }, 90_000);

  it('handles a message published after a slow batch was fetched before that batch ends, on its partition and on another', async () => {
    const topic = newTopic();
    await log.ensureTopics([{ name: topic, partitions: 2, schema: CONTRACT_EVENT_SCHEMA }]);
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const groupId = `g-${randomUUID()}`;
    const subscription = await log.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        calls.push(String(m.value.id));
        if (String(m.value.id).startsWith('slow-')) await released;
      },
    });
    const value = (id: string, seq: number) => ({ id, seq, size: 1, note: null });
    // Two slow documents: at most two of a partition's four keys are taken.
    await log.publish(topic, [
      { key: 'slow-a', value: value('slow-a', 1) },
      { key: 'slow-b', value: value('slow-b', 2) },
    ]);
    await vi.waitFor(() => expect(calls.filter((id) => id.startsWith('slow-')).length).toBe(2), { timeout: 30_000 });
    // Fetched in later batches while the slow handlers still run: each is handled now, not after them.
    await log.publish(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ key: `later-${i}`, value: value(`later-${i}`, 10 + i) })),
    );
    try {
      await vi.waitFor(() => expect(calls.filter((id) => id.startsWith('later-')).length).toBe(4), {
        timeout: 15_000,
      });
    } finally {
      release();
    }
    await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), { timeout: 30_000 });
    await subscription.stop();
  }, 90_000);

  it('with one document at a time a slow document holds back its partition (KB_KAFKA_KEY_CONCURRENCY=1)', async () => {
    const topic = newTopic();
    const serial = await anotherLog({ keysConsumedConcurrently: 1 });
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const subscription = await serial.subscribe({
      groupId: `g-${randomUUID()}`,
      topics: [topic],
      handler: async (m) => {
        calls.push(String(m.value.id));
        if (m.value.id === 'slow') await released;
      },
    });
    await log.publish(topic, [
      { key: 'a', value: { id: 'slow', seq: 1, size: 1, note: null } },
      { key: 'b', value: { id: 'next', seq: 2, size: 1, note: null } },
    ]);
    await vi.waitFor(() => expect(calls).toContain('slow'), { timeout: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(calls).toEqual(['slow']);
    release();
    await vi.waitFor(() => expect(calls).toEqual(['slow', 'next']), { timeout: 30_000 });
    await subscription.stop();
  }, 90_000);

  it('gathers the commits of handled messages and sends them when the subscription stops', async () => {
    const topic = newTopic();
    const gathering = await anotherLog({ commitIntervalMs: 60_000 });
    await log.ensureTopics([{ name: topic, partitions: 2, schema: CONTRACT_EVENT_SCHEMA }]);
    const groupId = `g-${randomUUID()}`;
    const handled: string[] = [];
    const subscription = await gathering.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        handled.push(String(m.value.id));
      },
    });
    await log.publish(
      topic,
      ['a', 'b', 'c', 'd'].map((key, seq) => ({ key, value: { id: `gathered-${key}`, seq, size: 1, note: null } })),
    );
    await vi.waitFor(() => expect(handled).toHaveLength(4), { timeout: 30_000 });
    // Handled, but the interval has not run out: nothing is committed yet.
    expect(await log.lag(groupId, topic)).toBeNull();
    await subscription.stop();
    expect(await log.lag(groupId, topic)).toBe(0);
    // A new member of the group starts after them: nothing is delivered twice.
    const seen: DeliveredMessage[] = [];
    const next = await log.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        seen.push(m);
      },
    });
    await log.publish(topic, [{ key: 'a', value: { id: 'after-stop', seq: 5, size: 1, note: null } }]);
    await vi.waitFor(() => expect(seen.map((m) => m.value.id)).toEqual(['after-stop']), { timeout: 30_000 });
    await next.stop();
  }, 90_000);

  it('keeps an existing topic and its partition count when ensureTopics asks for more, and warns', {
    timeout: 60_000,
  }, async () => {
    const topic = newTopic();
    const warnings: { obj: object; msg: string | undefined }[] = [];
    const watched = await anotherLog({
      logger: { warn: (obj, msg) => warnings.push({ obj, msg }), error: testLogger.error },
    });
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    await log.publish(topic, [{ key: 'k', value: { id: 'kept', seq: 1, size: 1, note: null } }]);
    await watched.ensureTopics([{ name: topic, partitions: 4, schema: CONTRACT_EVENT_SCHEMA }]);
    expect(warnings).toContainEqual({
      obj: { topic, partitions: 1, requested: 4 },
      msg: expect.stringContaining('fewer partitions than requested'),
    });
    const { seen, subscription } = await collect(topic);
    await vi.waitFor(() => expect(seen.map((m) => m.value.id)).toEqual(['kept']), { timeout: 30_000 });
    await subscription.stop();
    const kafka = new Kafka({ clientId: 'kb-test-admin', brokers, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(metadata.topics[0]?.partitions).toHaveLength(1);
    } finally {
      await admin.disconnect();
    }
  });
});

/**
 * A group member in another process, killed with SIGKILL while a handler is in flight: no
 * leave-group, no commit. Its partition must move to the surviving member once the broker drops
 * the dead member (session timeout), and the in-flight message must be delivered there.
 */
describe('kafka message log with a member in another process', () => {
  const adapterUrl = new URL('../../core/ports/message-log/kafka.adapter.ts', import.meta.url).href;
  const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
  let child: ChildProcess | null = null;
  let log: MessageLog & MessageLogAdmin;
  let subscription: Subscription | null = null;
  let topic = '';

  const childSource = `
    const [adapterUrl, brokers, registryUrl, topic, groupId] = process.argv.slice(1);
    const { createKafkaMessageLog } = await import(adapterUrl);
    const quiet = { warn() {}, error() {} };
    const log = await createKafkaMessageLog({
      brokers: brokers.split(','), clientId: 'kb-test-child', schemaRegistryUrl: registryUrl,
      sessionTimeoutMs: 8000, heartbeatIntervalMs: 1000, logger: quiet,
    });
    await log.subscribe({
      groupId, topics: [topic],
      handler: async (m) => {
        process.send({ type: 'handling', id: m.value.id, partition: m.partition });
        await new Promise(() => {});
      },
    });
    process.send({ type: 'ready' });
  `;

  beforeAll(async () => {
    log = await createKafkaMessageLog(options());
    topic = `t-${randomUUID()}`;
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await subscription?.stop();
    await log.deleteTopics([topic]).catch(() => undefined);
    await log.close();
  });

  it('moves the partitions of a SIGKILLed member to the survivor, which gets the uncommitted message', async () => {
    const groupId = `g-${randomUUID()}`;
    await log.ensureTopics([{ name: topic, partitions: 2, schema: CONTRACT_EVENT_SCHEMA }]);
    const inChild: { id: string; partition: number }[] = [];
    let ready = false;
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        childSource,
        adapterUrl,
        brokers.join(','),
        registryUrl,
        topic,
        groupId,
      ],
      { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    child.on('message', (msg: { type: string; id?: string; partition?: number }) => {
      if (msg.type === 'ready') ready = true;
      if (msg.type === 'handling') inChild.push({ id: String(msg.id), partition: Number(msg.partition) });
    });
    await vi.waitFor(() => expect(ready).toBe(true), { timeout: 60_000, interval: 50 });

    const inParent: DeliveredMessage[] = [];
    subscription = await log.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        inParent.push(m);
      },
    });
    const parentIds = () => inParent.map((m) => String(m.value.id));

    // Once the group has settled, each member owns one partition: probes reach both processes.
    let round = 0;
    await vi.waitFor(
      async () => {
        if (inChild.length === 0 || inParent.length === 0) {
          await log.publish(
            topic,
            Array.from({ length: 8 }, (_, i) => ({
              key: `key-${i}`,
              value: { id: `probe-${round}-${i}`, seq: i, size: i, note: null },
            })),
          );
          round++;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        expect(inChild.length).toBeGreaterThan(0);
        expect(inParent.length).toBeGreaterThan(0);
      },
      { timeout: 60_000, interval: 100 },
    );
    const stuck = inChild[0] as { id: string; partition: number };
    expect(parentIds()).not.toContain(stuck.id);

    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    await vi.waitFor(() => expect(parentIds()).toContain(stuck.id), { timeout: 90_000, interval: 100 });
    const takeover = inParent.find((m) => m.value.id === stuck.id) as DeliveredMessage;
    expect(takeover.partition).toBe(stuck.partition);
    await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), { timeout: 30_000, interval: 200 });
    console.info(`[kafka test] partition ${stuck.partition} taken over ${Date.now() - killedAt} ms after SIGKILL`);
  }, 180_000);
});
