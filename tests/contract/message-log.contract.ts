import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventSchema } from '../../core/events/event-schema.ts';
import type {
  DeliveredMessage,
  MessageLog,
  MessageLogAdmin,
  OutgoingMessage,
  Subscription,
  TopicSpec,
} from '../../core/ports/message-log/message-log.port.ts';

export interface MessageLogFixture {
  readonly log: MessageLog & MessageLogAdmin;
  /**
   * Another client of the same log (another connection, as a second process would have). The tests
   * close it to simulate a consumer that dies without stopping. Without it, those tests are skipped.
   */
  readonly makeAnother?: () => Promise<MessageLog & MessageLogAdmin>;
  cleanup(): Promise<void>;
}

/** Expectations that involve consumer-group membership may wait this long (rebalances take seconds). */
const GROUP_WAIT = { timeout: 30_000, interval: 50 };
/** Expectations about plain delivery. */
const DELIVERY_WAIT = { timeout: 20_000, interval: 25 };
const LONG_TEST = 120_000;

export const CONTRACT_EVENT_SCHEMA: EventSchema = {
  type: 'record',
  name: 'ContractEvent',
  namespace: 'kb.contract.v1',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'seq', type: 'int' },
    { name: 'size', type: 'long' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

interface ContractEvent {
  id: string;
  seq: number;
  size: number;
  note: string | null;
}

function event(id: string, seq = 0, note: string | null = null): ContractEvent {
  return { id, seq, size: 1_000_000_000_000 + seq, note };
}

function message(key: string, value: ContractEvent, headers?: Record<string, string>): OutgoingMessage {
  return headers ? { key, value: { ...value }, headers } : { key, value: { ...value } };
}

interface Recorder {
  readonly seen: DeliveredMessage[];
  readonly ids: () => string[];
  readonly handler: (message: DeliveredMessage) => Promise<void>;
}

function recorder(): Recorder {
  const seen: DeliveredMessage[] = [];
  return {
    seen,
    ids: () => seen.map((m) => String(m.value.id)),
    handler: async (m) => {
      seen.push(m);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The message-log contract (see `message-log.port.ts`), runnable against any adapter. Every test
 * creates its own random topics and groups and deletes its topics at the end.
 */
export function describeMessageLogContract(name: string, make: () => Promise<MessageLogFixture>): void {
  describe(`MessageLog contract: ${name}`, () => {
    let fixture: MessageLogFixture;
    let log: MessageLog & MessageLogAdmin;
    const topics: string[] = [];
    const subscriptions: Subscription[] = [];
    const extraLogs: MessageLog[] = [];

    async function topic(partitions: number): Promise<string> {
      const topicName = `t-${randomUUID()}`;
      topics.push(topicName);
      await log.ensureTopics([{ name: topicName, partitions, schema: CONTRACT_EVENT_SCHEMA }]);
      return topicName;
    }

    async function subscribe(
      target: MessageLog,
      groupId: string,
      topicNames: string[],
      handler: (m: DeliveredMessage) => Promise<void>,
      fromBeginning?: boolean,
    ): Promise<Subscription> {
      const subscription = await target.subscribe(
        fromBeginning === undefined
          ? { groupId, topics: topicNames, handler }
          : { groupId, topics: topicNames, handler, fromBeginning },
      );
      subscriptions.push(subscription);
      return subscription;
    }

    async function another(): Promise<MessageLog | null> {
      if (!fixture.makeAnother) return null;
      const other = await fixture.makeAnother();
      extraLogs.push(other);
      return other;
    }

    beforeAll(async () => {
      fixture = await make();
      log = fixture.log;
    });

    afterAll(async () => {
      if (!fixture) return;
      for (const subscription of subscriptions) {
        await Promise.race([subscription.stop().catch(() => undefined), sleep(10_000)]);
      }
      for (const other of extraLogs) await Promise.race([other.close().catch(() => undefined), sleep(10_000)]);
      await log.deleteTopics(topics).catch(() => undefined);
      await log.close();
      await fixture.cleanup();
    }, LONG_TEST);

    it('names its kind and answers ping', async () => {
      expect(log.kind.length).toBeGreaterThan(0);
      await expect(log.ping()).resolves.toBeUndefined();
    });

    it('ensureTopics is idempotent and keeps published messages', async () => {
      const t = await topic(3);
      const spec: TopicSpec = { name: t, partitions: 3, schema: CONTRACT_EVENT_SCHEMA };
      await log.ensureTopics([spec]);
      await log.publish(t, [message('a', event('m1')), message('b', event('m2'))]);
      await log.ensureTopics([spec, spec]);
      await log.publish(t, [message('c', event('m3'))]);
      const r = recorder();
      await subscribe(log, `g-${randomUUID()}`, [t], r.handler);
      await vi.waitFor(() => expect(r.ids().sort()).toEqual(['m1', 'm2', 'm3']), GROUP_WAIT);
    });

    it('delivers key, decoded value, headers, topic, partition, offset and timestamp', async () => {
      const t = await topic(2);
      const before = Date.now();
      const value = event('full', 7, 'with a note');
      await log.publish(t, [message('the-key', value, { 'trace-id': 'abc', 'content-type': 'kb/event' })]);
      const r = recorder();
      await subscribe(log, `g-${randomUUID()}`, [t], r.handler);
      await vi.waitFor(() => expect(r.seen.length).toBe(1), GROUP_WAIT);
      const m = r.seen[0] as DeliveredMessage;
      expect(m.topic).toBe(t);
      expect(m.key).toBe('the-key');
      expect(m.value).toEqual(value);
      expect(m.headers).toEqual({ 'trace-id': 'abc', 'content-type': 'kb/event' });
      expect([0, 1]).toContain(m.partition);
      expect(m.offset).toMatch(/^\d+$/);
      expect(m.timestamp).toBeGreaterThanOrEqual(before - 5_000);
      expect(m.timestamp).toBeLessThanOrEqual(Date.now() + 5_000);
    });

    it('rejects a value that does not match the schema with invalid-event and appends nothing', async () => {
      const t = await topic(2);
      const r = recorder();
      const groupId = `g-${randomUUID()}`;
      await subscribe(log, groupId, [t], r.handler);
      const invalid: OutgoingMessage[] = [
        message('k1', event('valid-in-bad-batch')),
        { key: 'k2', value: { id: 'bad', seq: 'not a number', size: 1, note: null } },
      ];
      await expect(log.publish(t, invalid)).rejects.toMatchObject({ code: 'invalid-event' });
      await expect(log.publish(t, [{ key: 'k3', value: { id: 'missing-fields' } }])).rejects.toMatchObject({
        code: 'invalid-event',
      });
      await log.publish(t, [message('k1', event('marker'))]);
      await vi.waitFor(() => expect(r.ids()).toContain('marker'), GROUP_WAIT);
      await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(0), GROUP_WAIT);
      expect(r.ids()).toEqual(['marker']);
    });

    it('keeps per-key publish order across partitions (200 messages, 10 keys)', async () => {
      const t = await topic(4);
      const keys = Array.from({ length: 10 }, (_, i) => `key-${i}`);
      const r = recorder();
      await subscribe(log, `g-${randomUUID()}`, [t], r.handler);
      let seq = 0;
      for (let batch = 0; batch < 20; batch++) {
        const messages = keys.map((key) => message(key, event(`${key}:${seq}`, seq++)));
        await log.publish(t, batch % 2 === 0 ? messages : messages.reverse());
      }
      await vi.waitFor(() => expect(new Set(r.ids()).size).toBe(200), GROUP_WAIT);
      const partitions = new Set<number>();
      for (const key of keys) {
        const deliveries = r.seen.filter((m) => m.key === key);
        // Order of first deliveries per key (a redelivery may repeat a message, never reorder).
        const firstSeen: number[] = [];
        for (const m of deliveries) if (!firstSeen.includes(Number(m.value.seq))) firstSeen.push(Number(m.value.seq));
        expect(firstSeen).toHaveLength(20);
        expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
        expect(new Set(deliveries.map((m) => m.partition)).size).toBe(1);
        partitions.add(deliveries[0]?.partition ?? -1);
      }
      expect(partitions.size).toBeGreaterThan(1);
    });

    it('delivers every message to every group', async () => {
      const t = await topic(3);
      const a = recorder();
      const b = recorder();
      await subscribe(log, `g-a-${randomUUID()}`, [t], a.handler);
      await subscribe(log, `g-b-${randomUUID()}`, [t], b.handler);
      const ids = Array.from({ length: 30 }, (_, i) => `every-${i}`);
      await log.publish(
        t,
        ids.map((id, i) => message(`k${i % 7}`, event(id, i))),
      );
      await vi.waitFor(() => {
        expect(new Set(a.ids())).toEqual(new Set(ids));
        expect(new Set(b.ids())).toEqual(new Set(ids));
      }, GROUP_WAIT);
    });

    it('starts a new group at the end when fromBeginning is false', async () => {
      const t = await topic(2);
      await log.publish(t, [message('a', event('old-1')), message('b', event('old-2'))]);
      const r = recorder();
      await subscribe(log, `g-${randomUUID()}`, [t], r.handler, false);
      // The group may still be joining: publish probes until one arrives, then the real messages.
      let probe = 0;
      await vi.waitFor(async () => {
        if (!r.ids().some((id) => id.startsWith('probe-'))) {
          await log.publish(t, [message(`p${probe}`, event(`probe-${probe++}`))]);
          await sleep(300);
        }
        expect(r.ids().some((id) => id.startsWith('probe-'))).toBe(true);
      }, GROUP_WAIT);
      await log.publish(t, [message('a', event('new-1')), message('b', event('new-2'))]);
      await vi.waitFor(() => expect(r.ids()).toEqual(expect.arrayContaining(['new-1', 'new-2'])), GROUP_WAIT);
      expect(r.ids()).not.toContain('old-1');
      expect(r.ids()).not.toContain('old-2');
    });

    it(
      'splits one group between two consumers: each message handled by one of them, all delivered',
      async () => {
        const t = await topic(4);
        const groupId = `g-${randomUUID()}`;
        const second = (await another()) ?? log;
        const a = recorder();
        const b = recorder();
        await subscribe(log, groupId, [t], a.handler);
        await subscribe(second, groupId, [t], b.handler);

        // Wait until the group has settled: a round of probes over many keys reaches both members.
        let round = 0;
        await vi.waitFor(async () => {
          const ids = Array.from({ length: 16 }, (_, i) => `probe-${round}-${i}`);
          round++;
          await log.publish(
            t,
            ids.map((id, i) => message(`probe-key-${i}`, event(id, i))),
          );
          const deadline = Date.now() + 10_000;
          while (Date.now() < deadline && !ids.every((id) => a.ids().includes(id) || b.ids().includes(id))) {
            await sleep(25);
          }
          expect(ids.some((id) => a.ids().includes(id))).toBe(true);
          expect(ids.some((id) => b.ids().includes(id))).toBe(true);
        }, GROUP_WAIT);

        const ids = Array.from({ length: 100 }, (_, i) => `work-${i}`);
        await log.publish(
          t,
          ids.map((id, i) => message(`key-${i % 20}`, event(id, i))),
        );
        const work = (r: Recorder) => r.ids().filter((id) => id.startsWith('work-'));
        await vi.waitFor(() => {
          expect(new Set([...work(a), ...work(b)])).toEqual(new Set(ids));
        }, GROUP_WAIT);
        await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(0), GROUP_WAIT);
        const handledByA = new Set(work(a));
        expect(work(b).filter((id) => handledByA.has(id))).toEqual([]);
        expect(work(a).length).toBeGreaterThan(0);
        expect(work(b).length).toBeGreaterThan(0);
      },
      LONG_TEST,
    );

    it(
      'redelivers a message whose handler rejects and does not move past it on its partition',
      async () => {
        const t = await topic(1);
        const order: string[] = [];
        let failures = 0;
        await subscribe(log, `g-${randomUUID()}`, [t], async (m) => {
          const id = String(m.value.id);
          order.push(id);
          if (id === 'flaky' && failures < 2) {
            failures++;
            throw new Error('cannot record an outcome right now');
          }
        });
        await log.publish(t, [message('same', event('flaky', 1)), message('same', event('after', 2))]);
        await vi.waitFor(() => expect(order).toContain('after'), GROUP_WAIT);
        expect(order.slice(0, 4)).toEqual(['flaky', 'flaky', 'flaky', 'after']);
      },
      LONG_TEST,
    );

    it(
      'stop() waits for the handler in flight and commits it; the next subscription resumes after it',
      async () => {
        const t = await topic(2);
        const groupId = `g-${randomUUID()}`;
        const first = recorder();
        let slowDone = false;
        let slowStarted = false;
        const subscription = await subscribe(log, groupId, [t], async (m) => {
          await first.handler(m);
          if (m.value.id === 'slow') {
            slowStarted = true;
            await sleep(500);
            slowDone = true;
          }
        });
        const batch1 = Array.from({ length: 10 }, (_, i) => `b1-${i}`);
        await log.publish(
          t,
          batch1.map((id, i) => message(`k${i % 4}`, event(id, i))),
        );
        await vi.waitFor(() => expect(new Set(first.ids())).toEqual(new Set(batch1)), GROUP_WAIT);
        await log.publish(t, [message('k0', event('slow'))]);
        await vi.waitFor(() => expect(slowStarted).toBe(true), GROUP_WAIT);
        await subscription.stop();
        expect(slowDone).toBe(true);

        const batch2 = Array.from({ length: 10 }, (_, i) => `b2-${i}`);
        await log.publish(
          t,
          batch2.map((id, i) => message(`k${i % 4}`, event(id, i))),
        );
        const second = recorder();
        await subscribe(log, groupId, [t], second.handler);
        await vi.waitFor(() => expect(new Set(second.ids())).toEqual(new Set(batch2)), GROUP_WAIT);
        await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(0), GROUP_WAIT);
        expect(new Set(second.ids())).toEqual(new Set(batch2));
      },
      LONG_TEST,
    );

    it(
      'redelivers the uncommitted message of a consumer that dies without stopping to another member',
      async (ctx) => {
        const doomed = await another();
        if (!doomed) {
          ctx.skip();
          return;
        }
        const t = await topic(1);
        const groupId = `g-${randomUUID()}`;
        const hung: string[] = [];
        let unblock: () => void = () => undefined;
        const blocked = new Promise<void>((resolve) => {
          unblock = resolve;
        });
        await doomed.subscribe({
          groupId,
          topics: [t],
          handler: async (m) => {
            hung.push(String(m.value.id));
            await blocked;
          },
        });
        await log.publish(t, [message('k', event('in-flight', 1)), message('k', event('queued', 2))]);
        await vi.waitFor(() => expect(hung).toEqual(['in-flight']), GROUP_WAIT);

        // The consumer's client goes away with the handler still running: no stop(), no commit.
        await Promise.race([
          doomed.close(),
          sleep(30_000).then(() => {
            throw new Error('close() did not return while a handler was in flight');
          }),
        ]);

        const survivor = recorder();
        await subscribe(log, groupId, [t], survivor.handler);
        await vi.waitFor(() => expect(survivor.ids()).toEqual(['in-flight', 'queued']), {
          ...GROUP_WAIT,
          timeout: 60_000,
        });
        unblock();
        await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(0), GROUP_WAIT);
        await log.publish(t, [message('k', event('later', 3))]);
        await vi.waitFor(() => expect(survivor.ids()).toEqual(['in-flight', 'queued', 'later']), GROUP_WAIT);
        expect(hung).toEqual(['in-flight']);
      },
      LONG_TEST,
    );

    it('reports lag: null before a group commits, then the messages not yet committed', async () => {
      const t = await topic(3);
      const groupId = `g-${randomUUID()}`;
      expect(await log.lag(groupId, t)).toBeNull();
      const r = recorder();
      const subscription = await subscribe(log, groupId, [t], r.handler);
      await log.publish(
        t,
        Array.from({ length: 5 }, (_, i) => message(`k${i}`, event(`lag-${i}`, i))),
      );
      await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(0), GROUP_WAIT);
      await subscription.stop();
      await log.publish(
        t,
        Array.from({ length: 3 }, (_, i) => message(`k${i}`, event(`lag-more-${i}`, i))),
      );
      await vi.waitFor(async () => expect(await log.lag(groupId, t)).toBe(3), DELIVERY_WAIT);
    });

    it('reports lag per partition, from the earliest message where the group never committed', async () => {
      const t = await topic(3);
      const groupId = `g-${randomUUID()}`;
      expect(await log.lagByPartition(groupId, t)).toEqual([0, 1, 2].map((partition) => ({ partition, lag: 0 })));
      await log.publish(
        t,
        Array.from({ length: 6 }, (_, i) => message(`k${i}`, event(`per-partition-${i}`, i))),
      );
      const uncommitted = await log.lagByPartition(groupId, t);
      expect(uncommitted.map((p) => p.partition)).toEqual([0, 1, 2]);
      expect(uncommitted.reduce((sum, p) => sum + p.lag, 0)).toBe(6);
      const r = recorder();
      const subscription = await subscribe(log, groupId, [t], r.handler);
      await vi.waitFor(
        async () => expect((await log.lagByPartition(groupId, t)).every((p) => p.lag === 0)).toBe(true),
        GROUP_WAIT,
      );
      await subscription.stop();
      await log.publish(t, [message('k0', event('per-partition-late', 0))]);
      const late = await log.lagByPartition(groupId, t);
      expect(late.filter((p) => p.lag > 0)).toHaveLength(1);
      expect(late.reduce((sum, p) => sum + p.lag, 0)).toBe(1);
    });

    it('reads every retained message whole, in offset order per partition, committing nothing', async () => {
      const t = await topic(3);
      expect(await log.readRetained(t)).toEqual([]);
      const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
      await log.publish(
        t,
        Array.from({ length: 18 }, (_, i) => message(keys[i % keys.length] as string, event(`whole-${i}`, i))),
      );
      const read = await log.readRetained(t);
      expect(read.map((m) => String(m.value.id)).sort()).toEqual(
        Array.from({ length: 18 }, (_, i) => `whole-${i}`).sort(),
      );
      // Partition by partition in ascending order, each in publish (offset) order.
      const partitions = read.map((m) => m.partition);
      expect(partitions).toEqual([...partitions].sort((a, b) => a - b));
      for (const key of keys) {
        const seqs = read.filter((m) => m.key === key).map((m) => Number(m.value.seq));
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
      expect(read[0]?.value).toEqual(event(String(read[0]?.value.id), Number(read[0]?.value.seq)));
      // The newest `limit` of each partition.
      const newest = await log.readRetained(t, { limit: 1 });
      const byPartition = new Map<number, DeliveredMessage[]>();
      for (const m of read) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m]);
      expect(newest.map((m) => m.value.id)).toEqual([...byPartition.values()].map((ms) => ms.at(-1)?.value.id));
      // A reader is no consumer group: a new group still starts at the first message.
      const r = recorder();
      await subscribe(log, `g-${randomUUID()}`, [t], r.handler);
      await vi.waitFor(() => expect(r.seen).toHaveLength(18), GROUP_WAIT);
      await expect(log.readRetained(`t-${randomUUID()}`)).rejects.toMatchObject({ code: 'not-found' });
    });

    it('with shares, takes the messages of a waiting share before more of a share whose handlers took longer, each key in order', async () => {
      const t = await topic(1);
      const slow = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];
      await log.publish(t, [
        ...slow.map((key) => message(key, event(key, 0, 'busy'))),
        ...['b0', 'b1', 'b2'].map((key) => message(key, event(key, 0, 'quiet'))),
        message('a0', event('a0-again', 1, 'busy')),
      ]);
      const order: string[] = [];
      const subscription = await log.subscribe({
        groupId: `g-${randomUUID()}`,
        topics: [t],
        shareOf: (m) => String(m.value.note),
        handler: async (m) => {
          if (m.value.note === 'busy') await sleep(150);
          order.push(String(m.value.id));
        },
      });
      subscriptions.push(subscription);
      await vi.waitFor(() => expect(order).toHaveLength(10), DELIVERY_WAIT);
      const at = (id: string) => order.indexOf(id);
      // The quiet share does not wait for the busy share's backlog: at most the handlers already running.
      for (const quiet of ['b0', 'b1', 'b2']) {
        expect(at(quiet), order.join(' ')).toBeLessThan(at('a4'));
        expect(at(quiet), order.join(' ')).toBeLessThan(at('a5'));
      }
      expect(at('a0')).toBeLessThan(at('a0-again'));
    });

    it('deletes topics idempotently, unknown names included', async () => {
      const t = `t-${randomUUID()}`;
      await log.ensureTopics([{ name: t, partitions: 1, schema: CONTRACT_EVENT_SCHEMA }]);
      await log.publish(t, [message('k', event('x'))]);
      await expect(log.deleteTopics([t])).resolves.toBeUndefined();
      await expect(log.deleteTopics([t, `t-${randomUUID()}`])).resolves.toBeUndefined();
      await expect(log.deleteTopics([])).resolves.toBeUndefined();
    });
  });
}
