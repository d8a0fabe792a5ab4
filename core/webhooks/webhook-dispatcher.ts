import { notificationFromRecord } from '../events/notifications.ts';
import type { Logger } from '../model/logger.model.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { MessageLog, Subscription } from '../ports/message-log/message-log.port.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookStore } from '../ports/webhook-store/webhook-store.port.ts';
import { retryDelayMs } from './retry-schedule.ts';
import { type AttemptOutcome, attemptDelivery } from './webhook-attempt.ts';
import { deliveriesFor } from './webhook-deliveries.ts';

/** What the dispatcher reports (the composition root hands it the metrics). */
export interface DispatchObserver {
  /** One attempt's outcome; `lagSeconds` (event time to success) when it was delivered. */
  delivery(outcome: 'delivered' | 'retrying' | 'failed', lagSeconds: number | null): void;
}

export interface WebhookDispatcherDeps {
  readonly log: MessageLog;
  readonly store: WebhookStore;
  readonly topic: string;
  readonly groupId: string;
  readonly policy: OutboundPolicy;
  readonly retryBaseMs: number;
  readonly timeoutMs: number;
  readonly disableAfterMs: number;
  /** Settled deliveries last updated longer ago than this are pruned (every `pruneEveryMs`). */
  readonly deliveryRetentionMs: number;
  readonly userAgent: string;
  readonly logger: Logger;
  readonly observer?: DispatchObserver;
  /** How often the store is read for due deliveries besides the wake-ups (default 500 ms). */
  readonly pollMs?: number;
  /** How often settled deliveries are pruned (default an hour; the first prune runs a minute after start). */
  readonly pruneEveryMs?: number;
}

export interface WebhookDispatcher {
  /** Looks for due deliveries now (after a delivery was enqueued or retried in this process). */
  wake(): void;
  /** Stops consuming and waits up to a second for the attempts in flight. */
  stop(): Promise<void>;
}

/** Attempts in flight at once, over all endpoints and per endpoint. */
const MAX_IN_FLIGHT = 64;
const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
/** How long `stop()` waits for attempts in flight. */
const STOP_GRACE_MS = 1_000;
/** Pending deliveries read per endpoint on each pass. */
const PER_ENDPOINT_WINDOW = 50;

/**
 * The webhook dispatcher: a consumer of the notification topic in its own consumer group, and the
 * worker that delivers what it enqueued.
 *
 * - The consumer turns each notification into one pending delivery per matching endpoint of the
 *   event's workspace, stored before the message is committed (idempotent per endpoint and event:
 *   a redelivered message changes nothing). It never waits for a receiver, so a slow endpoint
 *   cannot hold up the log.
 * - The worker reads pending deliveries from the store (on wake-ups and every `pollMs`) and
 *   attempts each due one whose subject has no earlier pending delivery to the same endpoint
 *   (in order per document), at most 4 at once per endpoint and 64 in all, each attempt on its own
 *   promise: a slow or dead endpoint only delays itself.
 * - A 2xx delivers; anything else is retried on the schedule of `retry-schedule.ts` and given up
 *   once it is spent. An endpoint whose attempts have all failed for `disableAfterMs` is disabled
 *   with the reason. A delivery to an endpoint that is disabled or removed is given up.
 * - Because pending deliveries are durable, a crash between commit and delivery loses nothing: on
 *   restart the worker attempts them again, with the same `webhook-id`.
 * - Delivered and given-up deliveries older than `deliveryRetentionMs` are pruned with their attempts
 *   (a minute after start, then every `pruneEveryMs`); pending ones are kept however old.
 */
export async function startWebhookDispatcher(deps: WebhookDispatcherDeps): Promise<WebhookDispatcher> {
  const { store, logger } = deps;
  const inFlight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();
  /** Deliveries whose attempt could not be recorded: not tried again before the time noted here. */
  const heldUntil = new Map<string, { until: number; failures: number }>();
  let stopped = false;
  let passing = false;
  let again = false;

  const subscription: Subscription = await deps.log.subscribe({
    groupId: deps.groupId,
    topics: [deps.topic],
    fromBeginning: true,
    async handler(message) {
      const notification = notificationFromRecord(message.value);
      const endpoints = await store.listEndpoints(notification.workspaceId);
      const deliveries = deliveriesFor(notification, endpoints, message.timestamp);
      if (deliveries.length === 0) return;
      await store.enqueueDeliveries(deliveries);
      wake();
    },
  });

  function wake(): void {
    if (stopped) return;
    if (passing) {
      again = true;
      return;
    }
    passing = true;
    void pass()
      .catch((error: unknown) => logger.warn({ err: String(error) }, 'reading pending webhook deliveries failed'))
      .finally(() => {
        passing = false;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  async function pass(): Promise<void> {
    const pending = await store.listPendingDeliveries(PER_ENDPOINT_WINDOW);
    const now = Date.now();
    const lanes = new Set<string>();
    for (const delivery of pending) {
      if (stopped || inFlight.size >= MAX_IN_FLIGHT) return;
      const lane = `${delivery.endpointId}\n${delivery.subject}`;
      if (lanes.has(lane)) continue; // an earlier delivery of this document is still pending
      lanes.add(lane);
      if (inFlight.has(delivery.id)) continue;
      if ((delivery.nextAttemptAtMs ?? 0) > now) continue;
      if ((heldUntil.get(delivery.id)?.until ?? 0) > now) continue;
      if ((perEndpoint.get(delivery.endpointId) ?? 0) >= MAX_IN_FLIGHT_PER_ENDPOINT) continue;
      start(delivery);
    }
  }

  function start(delivery: WebhookDelivery): void {
    perEndpoint.set(delivery.endpointId, (perEndpoint.get(delivery.endpointId) ?? 0) + 1);
    const work = attempt(delivery)
      .then(() => {
        heldUntil.delete(delivery.id);
      })
      .catch((error: unknown) => {
        // The store did not take the outcome: try again later, backing off up to a minute.
        const failures = (heldUntil.get(delivery.id)?.failures ?? 0) + 1;
        heldUntil.set(delivery.id, { until: Date.now() + Math.min(60_000, 500 * 2 ** failures), failures });
        logger.warn({ err: String(error), delivery: delivery.id }, 'recording a webhook attempt failed; it is retried');
      })
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perEndpoint.get(delivery.endpointId) ?? 1) - 1;
        if (left > 0) perEndpoint.set(delivery.endpointId, left);
        else perEndpoint.delete(delivery.endpointId);
        wake();
      });
    inFlight.set(delivery.id, work);
  }

  async function attempt(delivery: WebhookDelivery): Promise<void> {
    const endpoint = await store.getEndpoint(delivery.workspaceId, delivery.endpointId);
    const number = delivery.attempts + 1;
    if (!endpoint?.enabled) {
      const why = endpoint ? 'The endpoint is disabled; the delivery was not sent.' : 'The endpoint was removed.';
      await store.recordAttempt({
        deliveryId: delivery.id,
        attempt: number,
        atMs: Date.now(),
        statusCode: null,
        error: why,
        durationMs: 0,
      });
      await store.saveDelivery({ ...delivery, status: 'failed', nextAttemptAtMs: null, updatedAtMs: Date.now() });
      deps.observer?.delivery('failed', null);
      return;
    }
    const atMs = Date.now();
    const outcome = await attemptDelivery(endpoint, delivery, {
      timeoutMs: deps.timeoutMs,
      policy: deps.policy,
      userAgent: deps.userAgent,
    });
    await store.recordAttempt({
      deliveryId: delivery.id,
      attempt: number,
      atMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
    });
    const now = Date.now();
    if (outcome.ok) {
      await store.saveDelivery({
        ...delivery,
        status: 'delivered',
        attempts: number,
        nextAttemptAtMs: null,
        updatedAtMs: now,
        deliveredAtMs: now,
      });
      deps.observer?.delivery('delivered', lagSeconds(delivery, now));
      if (endpoint.failingSinceMs !== null) await settleEndpoint(endpoint, outcome, now);
      return;
    }
    const delay = retryDelayMs(number, deps.retryBaseMs);
    await store.saveDelivery({
      ...delivery,
      status: delay === null ? 'failed' : 'pending',
      attempts: number,
      nextAttemptAtMs: delay === null ? null : now + delay,
      updatedAtMs: now,
    });
    deps.observer?.delivery(delay === null ? 'failed' : 'retrying', null);
    await settleEndpoint(endpoint, outcome, now);
  }

  /** Records that the endpoint is failing (disabling it after `disableAfterMs`), or no longer is. */
  async function settleEndpoint(seen: WebhookEndpoint, outcome: AttemptOutcome, now: number): Promise<void> {
    // Read again: its owner may have changed it while the attempt was in flight.
    const endpoint = (await store.getEndpoint(seen.workspaceId, seen.id)) ?? seen;
    if (outcome.ok) {
      await store.updateEndpoint({ ...endpoint, failingSinceMs: null, updatedAtMs: now });
      return;
    }
    if (endpoint.failingSinceMs === null) {
      await store.updateEndpoint({ ...endpoint, failingSinceMs: now, updatedAtMs: now });
      return;
    }
    if (endpoint.enabled && now - endpoint.failingSinceMs >= deps.disableAfterMs) {
      const since = new Date(endpoint.failingSinceMs).toISOString();
      const reason = `Every delivery has failed since ${since}; the last attempt: ${outcome.error ?? 'no answer'}`;
      await store.updateEndpoint({ ...endpoint, enabled: false, disabledReason: reason, updatedAtMs: now });
      logger.warn({ endpoint: endpoint.id, workspace_id: endpoint.workspaceId }, 'webhook endpoint disabled: failing');
    }
  }

  const timer = setInterval(wake, deps.pollMs ?? 500);
  timer.unref();
  wake();

  const prune = () => {
    store
      .pruneDeliveries(Date.now() - deps.deliveryRetentionMs)
      .then((removed) => {
        if (removed > 0) logger.info({ removed }, 'old webhook deliveries pruned');
      })
      .catch((error: unknown) => logger.warn({ err: String(error) }, 'pruning old webhook deliveries failed'));
  };
  const pruneEveryMs = deps.pruneEveryMs ?? 3_600_000;
  const firstPrune = setTimeout(prune, Math.min(60_000, pruneEveryMs));
  firstPrune.unref();
  const pruneTimer = setInterval(prune, pruneEveryMs);
  pruneTimer.unref();

  return {
    wake,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      clearTimeout(firstPrune);
      clearInterval(pruneTimer);
      await subscription.stop();
      // Attempts in flight get a moment to record their outcome; one still waiting for its receiver
      // stays pending in the store and is attempted again, with the same webhook-id, after a restart.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight.values()]),
        new Promise((resolve) => {
          grace = setTimeout(resolve, STOP_GRACE_MS);
        }),
      ]);
      clearTimeout(grace);
    },
  };
}

function lagSeconds(delivery: WebhookDelivery, now: number): number | null {
  try {
    const at = Date.parse((JSON.parse(delivery.payload) as { timestamp?: string }).timestamp ?? '');
    return Number.isFinite(at) ? Math.max(0, (now - at) / 1000) : null;
  } catch {
    return null;
  }
}
