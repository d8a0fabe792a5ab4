/** Row shapes the webhook-store adapters share: snake_case columns ↔ records. */
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery, WebhookEndpoint } from './webhook-store.port.ts';

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string;
  description: string | null;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  failing_since_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  subject: string;
  payload: string;
  seq: number;
  status: string;
  attempts: number;
  next_attempt_at_ms: number | null;
  created_at_ms: number;
  updated_at_ms: number;
  delivered_at_ms: number | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  at_ms: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function endpointRow(e: WebhookEndpoint): EndpointRow {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    url: e.url,
    events: JSON.stringify(e.events),
    description: e.description,
    secret: e.secret,
    enabled: e.enabled ? 1 : 0,
    disabled_reason: e.disabledReason,
    failing_since_ms: e.failingSinceMs,
    created_at_ms: e.createdAtMs,
    updated_at_ms: e.updatedAtMs,
  };
}

export function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    description: r.description,
    secret: r.secret,
    enabled: Number(r.enabled) === 1,
    disabledReason: r.disabled_reason,
    failingSinceMs: numOrNull(r.failing_since_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function deliveryRow(d: WebhookDelivery): DeliveryRow {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    workspace_id: d.workspaceId,
    event_id: d.eventId,
    event_type: d.eventType,
    subject: d.subject,
    payload: d.payload,
    seq: d.seq,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at_ms: d.nextAttemptAtMs,
    created_at_ms: d.createdAtMs,
    updated_at_ms: d.updatedAtMs,
    delivered_at_ms: d.deliveredAtMs,
  };
}

export function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    workspaceId: r.workspace_id,
    eventId: r.event_id,
    eventType: r.event_type,
    subject: r.subject,
    payload: r.payload,
    seq: num(r.seq),
    status: r.status as DeliveryStatus,
    attempts: num(r.attempts),
    nextAttemptAtMs: numOrNull(r.next_attempt_at_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
    deliveredAtMs: numOrNull(r.delivered_at_ms),
  };
}

export function attemptRow(a: DeliveryAttempt): AttemptRow {
  return {
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    at_ms: a.atMs,
    status_code: a.statusCode,
    error: a.error,
    duration_ms: Math.round(a.durationMs),
  };
}

export function toAttempt(r: AttemptRow): DeliveryAttempt {
  return {
    deliveryId: r.delivery_id,
    attempt: num(r.attempt),
    atMs: num(r.at_ms),
    statusCode: numOrNull(r.status_code),
    error: r.error,
    durationMs: num(r.duration_ms),
  };
}
