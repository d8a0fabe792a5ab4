import type { KafkaMessage } from 'kafkajs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createKafkaDispatcher,
  type DispatcherDeps,
  type HandlerOutcome,
} from '../../../core/ports/message-log/kafka-dispatcher.ts';
import type { DeliveredMessage } from '../../../core/ports/message-log/message-log.port.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A fetched message whose value names it; `share` rides along as the tenant. */
function fetched(offset: number, key: string, id: string, share = 'w1'): KafkaMessage {
  return {
    offset: String(offset),
    key: Buffer.from(key),
    value: Buffer.from(JSON.stringify({ id, share })),
    timestamp: '0',
    attributes: 0,
    headers: {},
  } as KafkaMessage;
}

/** A dispatcher whose handlers finish when the test says so, recording starts, commits and pauses. */
function harness(overrides: Partial<DispatcherDeps> = {}) {
  const started: string[] = [];
  const running = new Map<string, (outcome: HandlerOutcome) => void>();
  const commits: string[] = [];
  const rewinds: string[] = [];
  const paused = new Map<number, boolean>();
  const dispatcher = createKafkaDispatcher({
    decode: async (topic, partition, message): Promise<DeliveredMessage> => ({
      topic,
      partition,
      offset: message.offset,
      key: message.key?.toString() ?? '',
      value: JSON.parse(String(message.value)),
      headers: {},
      timestamp: 0,
    }),
    handle: (message) =>
      new Promise<HandlerOutcome>((resolve) => {
        const id = String(message.value.id);
        started.push(id);
        running.set(id, resolve);
      }),
    commit: (_topic, partition, offset) => commits.push(`${partition}@${offset}`),
    rewind: (_topic, partition, offset) => rewinds.push(`${partition}@${offset}`),
    setPaused: (_topic, partition, value) => paused.set(partition, value),
    keysPerPartition: 4,
    maxRunning: 16,
    retryDelayMs: 50,
    maxWaitingPerPartition: 512,
    ...overrides,
  });
  const finish = async (id: string, outcome: HandlerOutcome = 'done') => {
    const resolve = running.get(id);
    if (!resolve) throw new Error(`${id} is not running (started: ${started.join(', ')})`);
    running.delete(id);
    resolve(outcome);
    await turn();
  };
  return { dispatcher, started, running, commits, rewinds, paused, finish };
}

describe('Kafka dispatcher', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("starts a later batch's message while the first batch's handlers still run", async () => {
    const h = harness();
    h.dispatcher.accept('t', 0, [fetched(0, 'big-1', 'big-1'), fetched(1, 'big-2', 'big-2')]);
    await turn();
    expect(h.started).toEqual(['big-1', 'big-2']);
    // The old consumer waited for big-1 and big-2 before it fetched this.
    h.dispatcher.accept('t', 0, [fetched(2, 'small', 'small')]);
    await turn();
    expect(h.started).toEqual(['big-1', 'big-2', 'small']);
    await h.finish('small');
    expect(h.commits).toEqual([]); // nothing handled from the start of the partition yet
    await h.finish('big-1');
    expect(h.commits).toEqual(['0@0']);
    await h.finish('big-2');
    expect(h.commits).toEqual(['0@0', '0@2']);
  });

  it("runs each key's messages one after another in offset order, across batches", async () => {
    const h = harness();
    h.dispatcher.accept('t', 0, [fetched(0, 'doc', 'doc-1')]);
    h.dispatcher.accept('t', 0, [fetched(1, 'doc', 'doc-2'), fetched(2, 'other', 'other-1')]);
    await turn();
    expect(h.started).toEqual(['doc-1', 'other-1']);
    await h.finish('doc-1');
    expect(h.started).toEqual(['doc-1', 'other-1', 'doc-2']);
  });

  it("gives a free slot to a quiet share's message on another partition before the rest of a busy share's backlog", async () => {
    const h = harness({ maxRunning: 1, shareOf: (m) => String(m.value.share) });
    h.dispatcher.accept(
      't',
      0,
      ['a', 'b', 'c', 'd', 'e'].map((key, i) => fetched(i, key, `busy-${i + 1}`, 'busy')),
    );
    await turn();
    h.dispatcher.accept('t', 3, [fetched(0, 'q', 'quiet-1', 'quiet')]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await h.finish('busy-1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await h.finish('busy-2');
    // In fetch order it would be fifth; a share that arrives starts level with the busy one.
    expect(h.started).toEqual(['busy-1', 'busy-2', 'quiet-1']);
  });

  it('keeps a partition to keysPerPartition handlers and the subscription to maxRunning', async () => {
    const h = harness({ keysPerPartition: 2, maxRunning: 3 });
    h.dispatcher.accept(
      't',
      0,
      ['a', 'b', 'c'].map((key, i) => fetched(i, key, `p0-${key}`)),
    );
    h.dispatcher.accept(
      't',
      1,
      ['a', 'b', 'c'].map((key, i) => fetched(i, key, `p1-${key}`)),
    );
    await turn();
    expect(h.started.sort()).toEqual(['p0-a', 'p0-b', 'p1-a']);
    expect(h.dispatcher.running).toBe(3);
  });

  it('after a rejection starts nothing more on the partition, rewinds it to the first unhandled message and resumes it', async () => {
    const h = harness();
    const taken = h.dispatcher.accept('t', 0, [fetched(5, 'a', 'a-1'), fetched(6, 'b', 'b-1'), fetched(7, 'a', 'a-2')]);
    expect(taken).toBe(true);
    await turn();
    await h.finish('a-1', 'failed');
    expect(h.paused.get(0)).toBe(true);
    expect(h.rewinds).toEqual([]); // b-1 still runs
    expect(h.dispatcher.accept('t', 0, [fetched(8, 'c', 'c-1')])).toBe(false);
    await h.finish('b-1');
    expect(h.rewinds).toEqual(['0@5']);
    expect(h.started).not.toContain('a-2');
    expect(h.commits).toEqual([]);
    await vi.waitFor(() => expect(h.paused.get(0)).toBe(false));
    // Fetched again from the rewound position: every message after it is taken again.
    h.dispatcher.accept('t', 0, [fetched(5, 'a', 'a-1 again'), fetched(6, 'b', 'b-1 again')]);
    await turn();
    expect(h.started.slice(-2)).toEqual(['a-1 again', 'b-1 again']);
  });

  it('ignores messages it already took (a re-join fetches from the last commit again)', async () => {
    const h = harness();
    h.dispatcher.accept('t', 0, [fetched(0, 'a', 'a-1'), fetched(1, 'b', 'b-1')]);
    await turn();
    await h.finish('a-1');
    h.dispatcher.accept('t', 0, [fetched(1, 'b', 'b-1 dup'), fetched(2, 'c', 'c-1')]);
    await turn();
    expect(h.started).toEqual(['a-1', 'b-1', 'c-1']);
  });

  it('pauses fetching a partition with a full backlog and resumes it when a quarter is left', async () => {
    const h = harness({ keysPerPartition: 1, maxRunning: 1, maxWaitingPerPartition: 8 });
    h.dispatcher.accept(
      't',
      0,
      Array.from({ length: 10 }, (_, i) => fetched(i, 'same', `m-${i}`)),
    );
    await turn();
    expect(h.paused.get(0)).toBe(true);
    for (let i = 0; i < 6; i++) await h.finish(`m-${i}`);
    expect(h.paused.get(0)).toBe(true); // 3 waiting: still above a quarter
    await h.finish('m-6');
    expect(h.paused.get(0)).toBe(false);
  });

  it('skips a message that can never be decoded, and commits past it', async () => {
    const h = harness({
      decode: async (topic, partition, message) =>
        message.offset === '0'
          ? null
          : { topic, partition, offset: message.offset, key: 'k', value: { id: 'ok' }, headers: {}, timestamp: 0 },
    });
    h.dispatcher.accept('t', 0, [fetched(0, 'k', 'garbage'), fetched(1, 'k', 'ok')]);
    await turn();
    expect(h.started).toEqual(['ok']);
    await h.finish('ok');
    expect(h.commits.at(-1)).toBe('0@1');
  });

  it('forgets a partition that went to another member: its waiting messages never start and nothing is committed', async () => {
    const h = harness({ keysPerPartition: 1 });
    h.dispatcher.accept('t', 0, [fetched(0, 'a', 'a-1'), fetched(1, 'b', 'b-1')]);
    h.dispatcher.accept('t', 1, [fetched(0, 'c', 'c-1')]);
    await turn();
    h.dispatcher.retain((_topic, partition) => partition === 1);
    await h.finish('a-1');
    expect(h.started).toEqual(['a-1', 'c-1']);
    expect(h.commits).toEqual([]);
    await h.finish('c-1');
    expect(h.commits).toEqual(['1@0']);
  });

  it('on close starts nothing more and waits for the handlers running', async () => {
    const h = harness({ keysPerPartition: 1 });
    h.dispatcher.accept('t', 0, [fetched(0, 'a', 'a-1'), fetched(1, 'b', 'b-1')]);
    await turn();
    let closed = false;
    const closing = h.dispatcher.close().then(() => {
      closed = true;
    });
    await turn();
    expect(closed).toBe(false);
    await h.finish('a-1');
    await closing;
    expect(h.started).toEqual(['a-1']);
  });
});
