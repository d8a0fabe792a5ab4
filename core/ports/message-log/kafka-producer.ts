import type { Message, TopicMessages } from 'kafkajs';
import { createGroupCommit } from '../../util/group-commit.ts';

/** Most publish calls that go out in one send (each call is a few messages of well under a KB). */
const MAX_CALLS_PER_SEND = 256;

/**
 * Coalesces concurrent publishes into few produce requests. An idempotent kafkajs producer sends
 * one request at a time per broker (it holds a lock per broker to keep sequence numbers in order),
 * so concurrent publishes would each wait a round trip behind the others. With this sender a call
 * made while a send is in flight waits for it and then goes out together with every other call
 * made meanwhile, in one `sendBatch`; a call made while nothing is in flight goes out at once.
 *
 * Calls keep their order within a topic, so messages with the same key keep their publish order. A
 * send that fails rejects every call in it with that error (some of their messages may have been
 * written: delivery stays at-least-once).
 */
export function createCoalescingSender(
  sendBatch: (topicMessages: TopicMessages[]) => Promise<void>,
): (topic: string, messages: Message[]) => Promise<void> {
  const submit = createGroupCommit<{ readonly topic: string; readonly messages: Message[] }>(
    async (calls) => {
      const byTopic = new Map<string, Message[]>();
      for (const call of calls) {
        const messages = byTopic.get(call.topic) ?? [];
        messages.push(...call.messages);
        byTopic.set(call.topic, messages);
      }
      await sendBatch([...byTopic].map(([topic, messages]) => ({ topic, messages })));
    },
    { maxItems: MAX_CALLS_PER_SEND },
  );
  return (topic, messages) => submit({ topic, messages });
}
