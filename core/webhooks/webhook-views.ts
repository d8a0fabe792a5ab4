import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from '../ports/webhook-store/webhook-store.port.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An endpoint as the API shows it; the secret only when it was just created or rotated. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

export interface DeliveryAttemptView {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface WebhookDeliveryView {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The document a `document.*` event is about; null for other events. */
  document_id: string | null;
  /** The source a `source.*` event is about; null for other events. */
  source_id: string | null;
  status: WebhookDelivery['status'];
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
  attempt_log: DeliveryAttemptView[];
}

export function endpointView(endpoint: WebhookEndpoint, withSecret = false): WebhookEndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: [...endpoint.events],
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    failing_since: iso(endpoint.failingSinceMs),
    created_at: iso(endpoint.createdAtMs) as string,
    updated_at: iso(endpoint.updatedAtMs) as string,
    ...(withSecret ? { secret: endpoint.secret } : {}),
  };
}

export function deliveryView(delivery: WebhookDelivery, attempts: readonly DeliveryAttempt[]): WebhookDeliveryView {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    document_id: delivery.eventType.startsWith('document.') ? delivery.subject : null,
    source_id: delivery.eventType.startsWith('source.') ? delivery.subject : null,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: iso(delivery.nextAttemptAtMs),
    created_at: iso(delivery.createdAtMs) as string,
    delivered_at: iso(delivery.deliveredAtMs),
    attempt_log: attempts
      .filter((a) => a.deliveryId === delivery.id)
      .map((a) => ({
        attempt: a.attempt,
        at: iso(a.atMs) as string,
        status_code: a.statusCode,
        error: a.error,
        duration_ms: a.durationMs,
      })),
  };
}
