import type { DeliveredMessage } from '../ports/message-log/message-log.port.ts';
import type { EventBase } from './events.ts';

/**
 * The event a delivered message carries, typed as the event type of its topic. The log accepted
 * the value only if it matched the topic's schema (see `MessageLog`), and each pipeline topic's
 * schema describes exactly one event type (see `topicSpecs`), so the value is an `E` when `E` is the
 * event type of `message.topic`. Stages receive their events through this, typed by their input.
 */
export function deliveredEvent<E extends EventBase>(message: DeliveredMessage): E {
  return message.value as unknown as E;
}
