/** A workspace's webhook endpoint. Times are epoch milliseconds. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly workspaceId: string;
  readonly url: string;
  /** Event types it receives, or `['*']` for all. */
  readonly events: readonly string[];
  readonly description: string | null;
  /** `whsec_` + base64 of 32 random bytes: deliveries are signed with it. */
  readonly secret: string;
  readonly enabled: boolean;
  /** Why it was disabled (by its owner, or after failing for too long), or null. */
  readonly disabledReason: string | null;
  /** Since when every delivery to it has failed (null after any success). */
  readonly failingSinceMs: number | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to deliver to one endpoint, and how far its delivery got. */
export interface WebhookDelivery {
  /** Stable per (endpoint, event). */
  readonly id: string;
  readonly endpointId: string;
  readonly workspaceId: string;
  /** The event id: the `webhook-id` header of every attempt. */
  readonly eventId: string;
  readonly eventType: string;
  /** What the event is about (a document id): deliveries of one subject go out in `seq` order. */
  readonly subject: string;
  /** The JSON body sent. */
  readonly payload: string;
  /** Order of enqueueing (increasing within a subject). */
  readonly seq: number;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** When the next attempt is due (pending), else null. */
  readonly nextAttemptAtMs: number | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly deliveredAtMs: number | null;
}

/** One attempt at a delivery. */
export interface DeliveryAttempt {
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly atMs: number;
  /** HTTP status answered, or null when no answer came (then `error` says why). */
  readonly statusCode: number | null;
  readonly error: string | null;
  /** Whole milliseconds (adapters round). */
  readonly durationMs: number;
}

/**
 * Webhook endpoints and their deliveries: the durable state of the webhook dispatcher, so a
 * pending delivery survives a crash and is retried with the same event id.
 *
 * Contract:
 * - Endpoints are read only within their workspace: `getEndpoint`, `updateEndpoint` and
 *   `deleteEndpoint` of another workspace's id find nothing (null / false). A deleted endpoint is
 *   gone from every read; its deliveries and attempts may be kept (reads by endpoint still list them).
 * - `updateEndpoint` replaces the endpoint's mutable fields; the last write wins.
 * - `enqueueDeliveries` is idempotent per delivery id: an id already stored is left exactly as it
 *   is (a redelivered log event never resets a delivery's progress).
 * - `listPendingDeliveries` returns pending deliveries, due or not (the dispatcher decides): of each
 *   endpoint the `perEndpoint` with the lowest `seq`, all in ascending `seq` (so an endpoint with a
 *   long backlog cannot crowd out the others); `saveDelivery` replaces a delivery's state (last write wins) and is visible to
 *   every later read of every process using the same store.
 * - `listDeliveries` is newest first (`seq` descending); attempts come in attempt order.
 * - `pruneDeliveries(beforeMs)` removes settled deliveries (`delivered` or `failed`) last updated
 *   before `beforeMs`, with their attempts, and returns how many it removed; pending deliveries are
 *   never removed. A delivery saved again at or after `beforeMs` (e.g. retried) survives a prune that
 *   runs at the same time. A removed delivery's id is forgotten: enqueueing it again stores it anew.
 * - Outside the contract: claiming a delivery for one process (two dispatchers on one store
 *   may both attempt it: delivery is at-least-once), transactions across calls.
 */
export interface WebhookStore {
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  getEndpoint(workspaceId: string, id: string): Promise<WebhookEndpoint | null>;
  /** The workspace's endpoints, oldest first. */
  listEndpoints(workspaceId: string): Promise<WebhookEndpoint[]>;
  updateEndpoint(endpoint: WebhookEndpoint): Promise<boolean>;
  deleteEndpoint(workspaceId: string, id: string): Promise<boolean>;

  enqueueDeliveries(deliveries: readonly WebhookDelivery[]): Promise<void>;
  getDelivery(workspaceId: string, id: string): Promise<WebhookDelivery | null>;
  /** Pending deliveries of every workspace: the first `perEndpoint` of each endpoint, `seq` ascending. */
  listPendingDeliveries(perEndpoint: number): Promise<WebhookDelivery[]>;
  /** An endpoint's deliveries, newest first, at most `limit`. */
  listDeliveries(workspaceId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  saveDelivery(delivery: WebhookDelivery): Promise<void>;
  recordAttempt(attempt: DeliveryAttempt): Promise<void>;
  /** Attempts of these deliveries, by delivery then attempt number. */
  listAttempts(deliveryIds: readonly string[]): Promise<DeliveryAttempt[]>;
  /** Removes settled deliveries last updated before `beforeMs`, and their attempts; returns how many. */
  pruneDeliveries(beforeMs: number): Promise<number>;
  /** Pending deliveries: how many, and the creation time of the oldest (null when none). */
  pendingSummary(): Promise<{ count: number; oldestCreatedAtMs: number | null }>;

  ping(): Promise<void>;
  close(): Promise<void>;
}
