import type { TopicMessages } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createCoalescingSender } from '../../../core/ports/message-log/kafka-producer.ts';

/** A `sendBatch` that finishes when the test says so, recording what each send carried. */
function controlledSend() {
  const sends: Array<{ batch: TopicMessages[]; finish(): void; fail(error: Error): void }> = [];
  const sendBatch = (batch: TopicMessages[]) =>
    new Promise<void>((resolve, reject) => {
      sends.push({ batch, finish: resolve, fail: reject });
    });
  return { sends, sendBatch };
}

const turn = () => new Promise((r) => setImmediate(r));
const message = (key: string, value: string) => ({ key, value });
const keysOf = (batch: TopicMessages[]) => batch.map((t) => [t.topic, t.messages.map((m) => `${m.key}=${m.value}`)]);

describe('coalescing Kafka sender', () => {
  it('sends at once when idle, and every call made during a send together in the next one, in call order', async () => {
    const { sends, sendBatch } = controlledSend();
    const send = createCoalescingSender(sendBatch);
    const first = send('parsed', [message('a', '1')]);
    await turn();
    expect(sends).toHaveLength(1);

    const waiting = [
      send('parsed', [message('b', '1')]),
      send('chunked', [message('a', '2')]),
      send('parsed', [message('a', '3'), message('c', '1')]),
    ];
    let settled = 0;
    for (const w of waiting) void w.then(() => settled++);
    await turn();
    expect(sends).toHaveLength(1);

    sends[0]?.finish();
    await first;
    await turn();
    expect(sends).toHaveLength(2);
    expect(keysOf(sends[1]?.batch ?? [])).toEqual([
      ['parsed', ['b=1', 'a=3', 'c=1']],
      ['chunked', ['a=2']],
    ]);
    expect(settled).toBe(0);
    sends[1]?.finish();
    await Promise.all(waiting);
    expect(settled).toBe(3);
  });

  it('fails every call of a failed send with its error, and goes on with the calls made after it', async () => {
    const { sends, sendBatch } = controlledSend();
    const send = createCoalescingSender(sendBatch);
    const first = send('parsed', [message('a', '1')]);
    await turn();
    const second = send('parsed', [message('b', '1')]);
    const third = send('parsed', [message('c', '1')]);
    sends[0]?.fail(new Error('broker gone'));
    await expect(first).rejects.toThrow('broker gone');
    await turn();
    sends[1]?.fail(new Error('still gone'));
    await expect(second).rejects.toThrow('still gone');
    await expect(third).rejects.toThrow('still gone');

    const fourth = send('parsed', [message('d', '1')]);
    await turn();
    expect(sends).toHaveLength(3);
    sends[2]?.finish();
    await expect(fourth).resolves.toBeUndefined();
  });
});
