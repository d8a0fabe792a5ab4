import { createHash } from 'node:crypto';
import type { Notification, NotificationPayload } from '../events/notifications.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../ports/webhook-store/webhook-store.port.ts';

/** Whether an endpoint subscribed to events of `type` (`*` subscribes to all). */
export function subscribesTo(endpoint: Pick<WebhookEndpoint, 'events'>, type: string): boolean {
  return endpoint.events.includes('*') || endpoint.events.includes(type);
}

/** The id of the delivery of one event to one endpoint: the same however often it is enqueued. */
export function deliveryId(endpointId: string, eventId: string): string {
  const hex = createHash('sha256').update(`${endpointId}\n${eventId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

let lastSeq = 0;
/** Increasing numbers for enqueue order (microseconds of this process's clock, made strictly increasing). */
export function nextSeq(now: number = Date.now()): number {
  lastSeq = Math.max(now * 1000, lastSeq + 1);
  return lastSeq;
}

/** A new pending delivery of `event` to `endpoint`, due at once. */
export function newDelivery(
  endpoint: Pick<WebhookEndpoint, 'id' | 'workspaceId'>,
  event: { readonly id: string; readonly subject: string; readonly payload: NotificationPayload },
  now: number = Date.now(),
): WebhookDelivery {
  return {
    id: deliveryId(endpoint.id, event.id),
    endpointId: endpoint.id,
    workspaceId: endpoint.workspaceId,
    eventId: event.id,
    eventType: event.payload.type,
    subject: event.subject,
    payload: JSON.stringify(event.payload),
    seq: nextSeq(now),
    status: 'pending',
    attempts: 0,
    nextAttemptAtMs: now,
    createdAtMs: now,
    updatedAtMs: now,
    deliveredAtMs: null,
  };
}

/**
 * The deliveries a notification makes: one per enabled endpoint of its workspace that subscribed to
 * its type and existed when the event was appended to the log (`appendedAtMs`).
 */
export function deliveriesFor(
  notification: Notification,
  endpoints: readonly WebhookEndpoint[],
  appendedAtMs: number,
  now: number = Date.now(),
): WebhookDelivery[] {
  return endpoints
    .filter(
      (e) =>
        e.workspaceId === notification.workspaceId &&
        e.enabled &&
        e.createdAtMs <= appendedAtMs &&
        subscribesTo(e, notification.payload.type),
    )
    .map((e) => newDelivery(e, notification, now));
}
