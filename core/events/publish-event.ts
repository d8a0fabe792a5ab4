import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { DeadLetter, DeadLetterReplay, EventBase } from './events.ts';

/**
 * Publishes one event to `topic` under `key`; the one way services and stages put events on the
 * log. Document events are keyed by their document id, so each document's events keep their
 * order for every consumer; a dead letter keeps the key of the message it records. Resolves once
 * the event is durable; rejects with `invalid-event` (publishing nothing) when the event does not
 * match the topic's schema. Delivery to consumers is at-least-once (see `MessageLog`).
 */
export async function publishEvent(
  log: MessageLog,
  topic: string,
  key: string,
  event: EventBase | DeadLetter | DeadLetterReplay,
): Promise<void> {
  await log.publish(topic, [{ key, value: event as unknown as Record<string, unknown> }]);
}
