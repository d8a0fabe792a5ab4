import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import { NOTIFICATION_TYPES, TEST_EVENT_TYPE } from '../events/notifications.ts';
import { checkOutboundTarget, type OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { WebhookEndpoint, WebhookStore } from '../ports/webhook-store/webhook-store.port.ts';
import type { RequestContext } from '../services/request-context.ts';
import { checkDisplayText } from '../util/display-text.ts';
import { newDelivery } from './webhook-deliveries.ts';
import { newWebhookSecret } from './webhook-secret.ts';
import { deliveryView, endpointView, type WebhookDeliveryView, type WebhookEndpointView } from './webhook-views.ts';

export interface WebhookInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly description?: string | null;
}

export interface WebhookChange {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly description?: string | null;
  readonly enabled?: boolean;
  /** Replace the secret with a new one (shown once, in the answer). */
  readonly rotateSecret?: boolean;
}

export interface WebhooksService {
  /** A new endpoint with a new secret, shown only in this answer. */
  create(ctx: RequestContext, input: WebhookInput): Promise<WebhookEndpointView>;
  list(ctx: RequestContext): Promise<WebhookEndpointView[]>;
  get(ctx: RequestContext, id: string): Promise<WebhookEndpointView>;
  /** Applies the change; the answer carries the new secret when it was rotated. */
  update(ctx: RequestContext, id: string, change: WebhookChange): Promise<WebhookEndpointView>;
  remove(ctx: RequestContext, id: string): Promise<void>;
  /** Enqueues a `webhook.test` event for the endpoint (delivered like any event). */
  sendTest(ctx: RequestContext, id: string): Promise<WebhookDeliveryView>;
  deliveries(ctx: RequestContext, id: string, limit: number): Promise<WebhookDeliveryView[]>;
  /** Makes a delivery pending again, due now (whatever its status). */
  retry(ctx: RequestContext, id: string, deliveryId: string): Promise<WebhookDeliveryView>;
  /** Event types an endpoint may subscribe to. */
  readonly eventTypes: readonly string[];
}

export interface WebhooksServiceDeps {
  readonly store: WebhookStore;
  readonly policy: OutboundPolicy;
  /** Tells this process's dispatcher, if any, that a delivery is due. */
  readonly wake?: () => void;
}

const notFound = (id: string) => new KbError('not-found', `No webhook endpoint ${id} in this workspace.`);

function checkEvents(events: readonly string[]): string[] {
  const unique = [...new Set(events)];
  const unknown = unique.filter((e) => e !== '*' && !(NOTIFICATION_TYPES as readonly string[]).includes(e));
  if (unique.length === 0 || unknown.length > 0) {
    throw new KbError(
      'validation-error',
      `events must list some of ${NOTIFICATION_TYPES.join(', ')}, or be ["*"]${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''}.`,
      { errors: [{ field: 'events', message: 'must name known event types' }] },
    );
  }
  return unique.includes('*') ? ['*'] : unique;
}

async function checkTarget(url: string, policy: OutboundPolicy): Promise<void> {
  try {
    await checkOutboundTarget(url, policy);
  } catch (error) {
    if (error instanceof KbError && error.code === 'outbound-refused') {
      throw new KbError('outbound-refused', error.message, { errors: [{ field: 'url', message: error.message }] });
    }
    throw error;
  }
}

/** Webhook endpoints of the caller's workspace and their deliveries (permission `write`). */
export function createWebhooksService(deps: WebhooksServiceDeps): WebhooksService {
  const { store } = deps;
  const load = async (ctx: RequestContext, id: string): Promise<WebhookEndpoint> => {
    const endpoint = await store.getEndpoint(ctx.workspaceId, id);
    if (!endpoint) throw notFound(id);
    return endpoint;
  };
  const withAttempts = async (list: Awaited<ReturnType<WebhookStore['listDeliveries']>>) => {
    const attempts = await store.listAttempts(list.map((d) => d.id));
    return list.map((d) => deliveryView(d, attempts));
  };

  return {
    eventTypes: NOTIFICATION_TYPES,

    async create(ctx, input) {
      const events = checkEvents(input.events);
      checkDisplayText('description', input.description);
      await checkTarget(input.url, deps.policy);
      const now = Date.now();
      const endpoint: WebhookEndpoint = {
        id: randomUUID(),
        workspaceId: ctx.workspaceId,
        url: input.url,
        events,
        description: input.description ?? null,
        secret: newWebhookSecret(),
        enabled: true,
        disabledReason: null,
        failingSinceMs: null,
        createdAtMs: now,
        updatedAtMs: now,
      };
      await store.createEndpoint(endpoint);
      return endpointView(endpoint, true);
    },

    async list(ctx) {
      return (await store.listEndpoints(ctx.workspaceId)).map((e) => endpointView(e));
    },

    async get(ctx, id) {
      return endpointView(await load(ctx, id));
    },

    async update(ctx, id, change) {
      const current = await load(ctx, id);
      checkDisplayText('description', change.description);
      if (change.url !== undefined) await checkTarget(change.url, deps.policy);
      const enabled = change.enabled ?? current.enabled;
      const next: WebhookEndpoint = {
        ...current,
        url: change.url ?? current.url,
        events: change.events === undefined ? current.events : checkEvents(change.events),
        description: change.description === undefined ? current.description : change.description,
        enabled,
        disabledReason: enabled ? null : change.enabled === false ? 'Disabled by its owner.' : current.disabledReason,
        // Enabling again starts the failure clock afresh.
        failingSinceMs: change.enabled === true && !current.enabled ? null : current.failingSinceMs,
        secret: change.rotateSecret ? newWebhookSecret() : current.secret,
        updatedAtMs: Date.now(),
      };
      if (!(await store.updateEndpoint(next))) throw notFound(id);
      return endpointView(next, change.rotateSecret === true);
    },

    async remove(ctx, id) {
      if (!(await store.deleteEndpoint(ctx.workspaceId, id))) throw notFound(id);
    },

    async sendTest(ctx, id) {
      const endpoint = await load(ctx, id);
      if (!endpoint.enabled) {
        throw new KbError('conflict', 'The endpoint is disabled; enable it (PATCH enabled: true) to send a test.');
      }
      const at = new Date().toISOString();
      const delivery = newDelivery(endpoint, {
        id: uuidv7(),
        subject: endpoint.id,
        payload: {
          type: TEST_EVENT_TYPE,
          timestamp: at,
          data: { workspace_id: ctx.workspaceId, endpoint_id: endpoint.id, message: 'A test event.' },
        },
      });
      await store.enqueueDeliveries([delivery]);
      deps.wake?.();
      return deliveryView(delivery, []);
    },

    async deliveries(ctx, id, limit) {
      await load(ctx, id);
      return withAttempts(await store.listDeliveries(ctx.workspaceId, id, limit));
    },

    async retry(ctx, id, deliveryId) {
      await load(ctx, id);
      const delivery = await store.getDelivery(ctx.workspaceId, deliveryId);
      if (!delivery || delivery.endpointId !== id) {
        throw new KbError('not-found', `No delivery ${deliveryId} of webhook endpoint ${id}.`);
      }
      const now = Date.now();
      const again = { ...delivery, status: 'pending' as const, nextAttemptAtMs: now, updatedAtMs: now };
      await store.saveDelivery(again);
      deps.wake?.();
      return (await withAttempts([again]))[0] as WebhookDeliveryView;
    },
  };
}
