import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type {
  DeliveredMessage,
  MessageLog,
  MessageLogAdmin,
  MessageLogTail,
  Subscription,
} from '../../core/ports/message-log/message-log.port.ts';
import { CONTRACT_EVENT_SCHEMA } from './message-log.contract.ts';

export interface MessageLogTailFixture {
  readonly log: MessageLog & MessageLogAdmin & MessageLogTail;
  cleanup(): Promise<void>;
}

const WAIT = { timeout: 20_000, interval: 25 };
const value = (id: string, seq: number) => ({ id, seq, size: seq, note: null });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The tail part of the message-log contract (see `MessageLogTail`), run against every adapter. */
export function describeMessageLogTailContract(name: string, make: () => Promise<MessageLogTailFixture>): void {
  describe(`MessageLogTail contract: ${name}`, () => {
    let fixture: MessageLogTailFixture;
    let log: MessageLog & MessageLogAdmin & MessageLogTail;
    const topics: string[] = [];
    const tails: Subscription[] = [];

    async function topic(partitions: number): Promise<string> {
      const name = `tail-${randomUUID()}`;
      topics.push(name);
      await log.ensureTopics([{ name, partitions, schema: CONTRACT_EVENT_SCHEMA }]);
      return name;
    }
    async function tail(options: Parameters<MessageLogTail['tail']>[0]): Promise<Subscription> {
      const started = await log.tail(options);
      tails.push(started);
      return started;
    }

    beforeAll(async () => {
      fixture = await make();
      log = fixture.log;
    }, 60_000);
    afterAll(async () => {
      for (const t of tails) await t.stop().catch(() => undefined);
      await log?.deleteTopics(topics).catch(() => undefined);
      await log?.close();
      await fixture?.cleanup();
    }, 60_000);

    it('without a start instant, sees only what is published after it started, in order per partition', async () => {
      const name = await topic(3);
      await log.publish(name, [{ key: 'a', value: value('before', 0) }]);
      const seen: DeliveredMessage[] = [];
      await tail({ topic: name, handler: async (m) => void seen.push(m) });
      await sleep(300);
      const keys = ['a', 'b', 'c', 'd'];
      for (let seq = 1; seq <= 5; seq++) {
        await log.publish(
          name,
          keys.map((key) => ({ key, value: value(`${key}${seq}`, seq) })),
        );
      }
      await vi.waitFor(() => expect(seen).toHaveLength(20), WAIT);
      expect(seen.map((m) => m.value.id)).not.toContain('before');
      for (const key of keys) {
        expect(seen.filter((m) => m.key === key).map((m) => m.value.seq)).toEqual([1, 2, 3, 4, 5]);
      }
      expect(seen.every((m) => m.topic === name && typeof m.timestamp === 'number')).toBe(true);
    });

    it('from an instant, starts at the first message appended at or after it and goes on live', async () => {
      const name = await topic(2);
      await log.publish(name, [
        { key: 'k1', value: value('old-1', 1) },
        { key: 'k2', value: value('old-2', 1) },
      ]);
      await sleep(50);
      const since = Date.now();
      await sleep(50);
      await log.publish(name, [
        { key: 'k1', value: value('new-1', 2) },
        { key: 'k2', value: value('new-2', 2) },
      ]);
      const seen: DeliveredMessage[] = [];
      await tail({ topic: name, sinceMs: since, handler: async (m) => void seen.push(m) });
      await vi.waitFor(() => expect(seen.map((m) => m.value.id).sort()).toEqual(['new-1', 'new-2']), WAIT);
      await log.publish(name, [{ key: 'k1', value: value('live-1', 3) }]);
      await vi.waitFor(() => expect(seen.map((m) => m.value.id)).toContain('live-1'), WAIT);
      expect(seen.map((m) => m.value.id)).not.toContain('old-1');
      expect(seen.every((m) => m.timestamp >= since)).toBe(true);
    });

    it('tells once when everything appended before it started is handled, then goes on live', async () => {
      const name = await topic(3);
      const since = Date.now() - 1;
      // More than one read's worth on a partition, and keys spread over the others.
      const backlog = Array.from({ length: 450 }, (_, i) => ({
        key: i < 300 ? 'busy' : `k${i % 7}`,
        value: value(`old-${i}`, i),
      }));
      for (let i = 0; i < backlog.length; i += 150) await log.publish(name, backlog.slice(i, i + 150));
      const seen: string[] = [];
      const caughtUpAt: number[] = [];
      await tail({
        topic: name,
        sinceMs: since,
        handler: async (m) => void seen.push(String(m.value.id)),
        onCaughtUp: () => caughtUpAt.push(seen.length),
      });
      await vi.waitFor(() => expect(caughtUpAt).toHaveLength(1), WAIT);
      // Every message of the backlog was handled before the call.
      expect(caughtUpAt[0]).toBeGreaterThanOrEqual(450);
      expect(new Set(seen.slice(0, caughtUpAt[0])).size).toBeGreaterThanOrEqual(450);
      await log.publish(name, [{ key: 'busy', value: value('live', 1) }]);
      await vi.waitFor(() => expect(seen).toContain('live'), WAIT);
      expect(caughtUpAt).toHaveLength(1);

      // Without a start instant there is no past: caught up at once, nothing read.
      const fresh: string[] = [];
      let freshCaughtUp = -1;
      await tail({
        topic: name,
        handler: async (m) => void fresh.push(String(m.value.id)),
        onCaughtUp: () => {
          freshCaughtUp = fresh.length;
        },
      });
      await vi.waitFor(() => expect(freshCaughtUp).toBe(0), WAIT);
    });

    it('stops delivering after stop(), and ends by itself when its handler rejects', async () => {
      const name = await topic(1);
      const stoppedSeen: string[] = [];
      const stopped = await tail({ topic: name, handler: async (m) => void stoppedSeen.push(String(m.value.id)) });
      const failing: string[] = [];
      let ended: unknown = null;
      await tail({
        topic: name,
        handler: async (m) => {
          failing.push(String(m.value.id));
          throw new Error('the client went away');
        },
        onEnd: (error) => {
          ended = error;
        },
      });
      await sleep(300);
      await log.publish(name, [{ key: 'x', value: value('one', 1) }]);
      await vi.waitFor(() => expect(stoppedSeen).toEqual(['one']), WAIT);
      await vi.waitFor(() => expect(ended).toBeInstanceOf(Error), WAIT);
      await stopped.stop();
      await log.publish(name, [{ key: 'x', value: value('two', 2) }]);
      await sleep(1_000);
      expect(stoppedSeen).toEqual(['one']);
      expect(failing).toEqual(['one']);
    });

    it('rejects a tail of a topic that does not exist', async () => {
      await expect(log.tail({ topic: `missing-${randomUUID()}`, handler: async () => {} })).rejects.toBeDefined();
    });
  });
}
