import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeliveredMessage, MessageLog, MessageLogAdmin } from '../../core/ports/message-log/message-log.port.ts';
import {
  createSqliteMessageLog,
  type MessageLogErrorContext,
  partitionForKey,
  type SqliteMessageLogOptions,
} from '../../core/ports/message-log/sqlite.adapter.ts';
import { CONTRACT_EVENT_SCHEMA, describeMessageLogContract } from './message-log.contract.ts';
import { describeMessageLogTailContract } from './message-log-tail.contract.ts';

const LEASE_MS = 1500;

describeMessageLogContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-log-'));
  const file = path.join(dir, 'log', 'messages.db');
  const options: SqliteMessageLogOptions = { file, leaseMs: LEASE_MS, retryDelayMs: 200 };
  return {
    log: createSqliteMessageLog(options),
    makeAnother: async () => createSqliteMessageLog(options),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describeMessageLogContract('sqlite, 4 keys at once per partition', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-log-'));
  const file = path.join(dir, 'log', 'messages.db');
  const options: SqliteMessageLogOptions = { file, leaseMs: LEASE_MS, retryDelayMs: 200, keyConcurrency: 4 };
  return {
    log: createSqliteMessageLog(options),
    makeAnother: async () => createSqliteMessageLog(options),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

const value = (id: string, seq = 0) => ({ id, seq, size: seq, note: null });
const WAIT = { timeout: 30_000, interval: 25 };

describe('sqlite message log', () => {
  let dir: string;
  const logs: MessageLog[] = [];
  const open = (options: Omit<SqliteMessageLogOptions, 'file'> & { file?: string } = {}) => {
    const log = createSqliteMessageLog({ file: path.join(dir, 'log.db'), leaseMs: LEASE_MS, ...options });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kb-log-sqlite-'));
  });

  afterAll(async () => {
    for (const log of logs) await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('partitions keys exactly as Kafka clients do (murmur2)', () => {
    const require = createRequire(import.meta.url);
    const kafkaMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: string) => number;
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'doc-123',
      'ünïcødé-κλειδί',
      ...Array.from({ length: 200 }, () => randomUUID()),
    ];
    for (const key of keys) {
      for (const partitions of [1, 3, 6, 12]) {
        expect(partitionForKey(key, partitions)).toBe((kafkaMurmur2(key) & 0x7fffffff) % partitions);
      }
    }
  });

  it('rejects publishing to or subscribing to a topic that does not exist with not-found', async () => {
    const log = open();
    await expect(log.publish(`t-${randomUUID()}`, [{ key: 'k', value: value('x') }])).rejects.toMatchObject({
      code: 'not-found',
    });
    await expect(
      log.subscribe({ groupId: 'g', topics: [`t-${randomUUID()}`], handler: async () => undefined }),
    ).rejects.toMatchObject({ code: 'not-found' });
  });

  it('keeps messages and committed offsets across a reopen of the file', async () => {
    const file = path.join(dir, 'reopen.db');
    const topic = `t-${randomUUID()}`;
    const first = createSqliteMessageLog({ file, leaseMs: LEASE_MS });
    await first.ensureTopics([{ name: topic, partitions: 2, schema: CONTRACT_EVENT_SCHEMA }]);
    await first.publish(
      topic,
      [0, 1, 2].map((i) => ({ key: `k${i}`, value: value(`before-${i}`, i) })),
    );
    const seen: string[] = [];
    const sub = await first.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async (m) => {
        seen.push(String(m.value.id));
      },
    });
    await vi.waitFor(() => expect(seen).toHaveLength(3), WAIT);
    await sub.stop();
    await first.publish(topic, [{ key: 'k9', value: value('while-away') }]);
    await first.close();

    const second = open({ file });
    const after: string[] = [];
    await second.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async (m) => {
        after.push(String(m.value.id));
      },
    });
    await vi.waitFor(() => expect(after).toEqual(['while-away']), WAIT);
    expect(await second.lag('g', topic)).toBe(0);
  });

  it('decodes each message with the schema it was written with after the topic schema evolves', async () => {
    const log = open();
    const topic = `t-${randomUUID()}`;
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    await log.publish(topic, [{ key: 'k', value: value('v1') }]);
    const evolved = {
      ...CONTRACT_EVENT_SCHEMA,
      fields: [...(CONTRACT_EVENT_SCHEMA.fields as object[]), { name: 'extra', type: 'string', default: '' }],
    };
    await log.ensureTopics([{ name: topic, partitions: 1, schema: evolved }]);
    await log.publish(topic, [{ key: 'k', value: { ...value('v2'), extra: 'more' } }]);
    await expect(log.publish(topic, [{ key: 'k', value: { ...value('v2'), extra: 5 } }])).rejects.toMatchObject({
      code: 'invalid-event',
    });
    const seen: DeliveredMessage[] = [];
    await log.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async (m) => {
        seen.push(m);
      },
    });
    await vi.waitFor(() => expect(seen).toHaveLength(2), WAIT);
    expect(seen[0]?.value).toEqual(value('v1'));
    expect(seen[1]?.value).toEqual({ ...value('v2'), extra: 'more' });
  });

  it('reports handler rejections to onError with the message', async () => {
    const errors: [unknown, MessageLogErrorContext][] = [];
    const log = open({ retryDelayMs: 50, onError: (error, context) => errors.push([error, context]) });
    const topic = `t-${randomUUID()}`;
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    let calls = 0;
    await log.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
    });
    await log.publish(topic, [{ key: 'k', value: value('once') }]);
    await vi.waitFor(() => expect(calls).toBe(2), WAIT);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.[0]).toMatchObject({ message: 'boom' });
    expect(errors[0]?.[1]).toMatchObject({ groupId: 'g', phase: 'handler', message: { key: 'k', offset: '0' } });
  });

  for (const shares of [false, true]) {
    it(`with keyConcurrency, handles other keys of a partition while one is slow, each key in order${shares ? ' (with shares)' : ''}`, async () => {
      const log = open({ keyConcurrency: 4, pollIntervalMs: 25 });
      const topic = `t-${randomUUID()}`;
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
        ...(shares ? { shareOf: (m: DeliveredMessage) => String(m.value.id).split('-')[0] ?? '' } : {}),
        handler: async (m) => {
          calls.push(String(m.value.id));
          if (m.value.id === 'slow-1') await released;
        },
      });
      await log.publish(topic, [
        { key: 'slow', value: value('slow-1', 1) },
        { key: 'slow', value: value('slow-2', 2) },
      ]);
      await vi.waitFor(() => expect(calls).toContain('slow-1'), WAIT);
      // Published while the slow one runs: handled at once, not after it.
      await log.publish(
        topic,
        Array.from({ length: 6 }, (_, i) => ({ key: `quick-${i}`, value: value(`quick-${i}`, 3 + i) })),
      );
      await vi.waitFor(() => expect(calls.filter((id) => id.startsWith('quick-'))).toHaveLength(6), WAIT);
      expect(calls).not.toContain('slow-2');
      expect(await log.lag(groupId, topic)).toBeNull(); // nothing committed: the slow message is first
      release();
      await vi.waitFor(async () => expect(await log.lag(groupId, topic)).toBe(0), WAIT);
      await subscription.stop();
      expect(calls.filter((id) => id.startsWith('slow-'))).toEqual(['slow-1', 'slow-2']);
    });
  }

  it('retention deletes only old messages that every committing group has consumed', async () => {
    const file = path.join(dir, 'retention.db');
    const log = open({ file, retentionMs: 0, retryDelayMs: 50 });
    const topic = `t-${randomUUID()}`;
    await log.ensureTopics([{ name: topic, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
    await log.publish(
      topic,
      [0, 1, 2, 3, 4].map((i) => ({ key: 'k', value: value(`m${i}`, i) })),
    );
    expect(log.sweepRetention(Date.now() + 1000)).toBe(0); // No group has committed yet.

    const fast: string[] = [];
    await log.subscribe({
      groupId: 'fast',
      topics: [topic],
      handler: async (m) => {
        fast.push(String(m.value.id));
      },
    });
    let slowBlocked = true;
    const slow: string[] = [];
    await log.subscribe({
      groupId: 'slow',
      topics: [topic],
      handler: async (m) => {
        if (m.value.id === 'm2' && slowBlocked) throw new Error('not yet');
        slow.push(String(m.value.id));
      },
    });
    await vi.waitFor(async () => {
      expect(await log.lag('fast', topic)).toBe(0);
      expect(await log.lag('slow', topic)).toBe(3);
    }, WAIT);

    const keepLonger = open({ file }); // Default retention: a week.
    expect(keepLonger.sweepRetention()).toBe(0);
    expect(log.sweepRetention(Date.now() + 1000)).toBe(2);
    expect(await log.lag('slow', topic)).toBe(3);

    slowBlocked = false;
    await vi.waitFor(() => expect(slow).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']), WAIT);
    await vi.waitFor(async () => expect(await log.lag('slow', topic)).toBe(0), WAIT);
    expect(log.sweepRetention(Date.now() + 1000)).toBe(3);

    // A group that starts later sees only what is retained, and nothing is lost from here on.
    const late: string[] = [];
    await log.subscribe({
      groupId: 'late',
      topics: [topic],
      handler: async (m) => {
        late.push(String(m.value.id));
      },
    });
    await log.publish(topic, [{ key: 'k', value: value('m5', 5) }]);
    await vi.waitFor(() => expect(late).toEqual(['m5']), WAIT);
    expect(fast).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
  });
});

describe('sqlite message log shared by two processes', () => {
  const script = fileURLToPath(new URL('./message-log-consumer.process.ts', import.meta.url));
  const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
  let dir: string;
  let child: ChildProcess | null = null;
  let log: (MessageLog & MessageLogAdmin) | null = null;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kb-log-processes-'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await log?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('splits partitions with a consumer in another process and takes over its work after SIGKILL, losing nothing', async () => {
    const file = path.join(dir, 'shared.db');
    const topic = `t-${randomUUID()}`;
    const groupId = `g-${randomUUID()}`;
    log = createSqliteMessageLog({ file, leaseMs: LEASE_MS, pollIntervalMs: 25 });
    await log.ensureTopics([{ name: topic, partitions: 4, schema: CONTRACT_EVENT_SCHEMA }]);

    const inChild: { id: string; partition: number; hanging: boolean }[] = [];
    let ready = false;
    let hanging = false;
    child = fork(script, [file, topic, groupId, String(LEASE_MS)], {
      cwd: repoRoot,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (msg: { type: string; id?: string; partition?: number; hanging?: boolean }) => {
      if (msg.type === 'ready') ready = true;
      if (msg.type === 'hanging') hanging = true;
      if (msg.type === 'handled') {
        inChild.push({ id: String(msg.id), partition: Number(msg.partition), hanging: Boolean(msg.hanging) });
      }
    });
    await vi.waitFor(() => expect(ready).toBe(true), WAIT);

    const inParent: DeliveredMessage[] = [];
    await log.subscribe({
      groupId,
      topics: [topic],
      handler: async (m) => {
        inParent.push(m);
      },
    });
    const parentIds = () => inParent.map((m) => String(m.value.id));
    const childIds = () => inChild.map((m) => m.id);
    const handledOnce = (id: string) => parentIds().includes(id) || childIds().includes(id);

    // Sharing: a round of messages over many keys reaches both processes.
    let round = 0;
    await vi.waitFor(async () => {
      const ids = Array.from({ length: 16 }, (_, i) => `probe-${round}-${i}`);
      round++;
      await log?.publish(
        topic,
        ids.map((id, i) => ({ key: `probe-${i}`, value: value(id, i) })),
      );
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && !ids.every(handledOnce)) await new Promise((r) => setTimeout(r, 25));
      expect(ids.some((id) => parentIds().includes(id))).toBe(true);
      expect(ids.some((id) => childIds().includes(id))).toBe(true);
    }, WAIT);
    const work = Array.from({ length: 60 }, (_, i) => `work-${i}`);
    await log.publish(
      topic,
      work.map((id, i) => ({ key: `key-${i}`, value: value(id, i) })),
    );
    await vi.waitFor(() => expect(work.every(handledOnce)).toBe(true), WAIT);
    await vi.waitFor(async () => expect(await log?.lag(groupId, topic)).toBe(0), WAIT);
    const inBoth = work.filter((id) => parentIds().includes(id) && childIds().includes(id));
    expect(inBoth).toEqual([]);
    const parentPartitions = new Set(
      inParent.filter((m) => String(m.value.id).startsWith('work-')).map((m) => m.partition),
    );
    const childPartitions = new Set(inChild.filter((m) => m.id.startsWith('work-')).map((m) => m.partition));
    expect([...parentPartitions].filter((p) => childPartitions.has(p))).toEqual([]);
    expect(parentPartitions.size + childPartitions.size).toBe(4);

    // Crash: the child stops finishing its handlers, then dies with messages in flight.
    child.send('hang');
    await vi.waitFor(() => expect(hanging).toBe(true), WAIT);
    const crash = Array.from({ length: 40 }, (_, i) => `crash-${i}`);
    await log.publish(
      topic,
      crash.map((id, i) => ({ key: `key-${i}`, value: value(id, i) })),
    );
    await vi.waitFor(() => expect(inChild.some((m) => m.hanging)).toBe(true), WAIT);
    const stuckInChild = inChild.filter((m) => m.hanging).map((m) => m.id);
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    await vi.waitFor(() => expect(crash.filter((id) => !parentIds().includes(id))).toEqual([]), WAIT);
    await vi.waitFor(async () => expect(await log?.lag(groupId, topic)).toBe(0), WAIT);
    for (const id of stuckInChild) expect(parentIds()).toContain(id);
    expect(new Set(inParent.filter((m) => String(m.value.id).startsWith('crash-')).map((m) => m.partition)).size).toBe(
      4,
    );
  }, 120_000);
});

describeMessageLogTailContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-log-tail-'));
  return {
    log: createSqliteMessageLog({ file: path.join(dir, 'log.db') }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
