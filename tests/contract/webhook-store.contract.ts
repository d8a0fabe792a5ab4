import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookStore,
} from '../../core/ports/webhook-store/webhook-store.port.ts';

export interface WebhookStoreFixture {
  readonly store: WebhookStore;
  cleanup(): Promise<void>;
}

function endpoint(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: randomUUID(),
    workspaceId: `ws-${randomUUID()}`,
    url: 'https://hooks.example.com/kb',
    events: ['document.version.completed'],
    description: 'contract endpoint',
    secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    enabled: true,
    disabledReason: null,
    failingSinceMs: null,
    createdAtMs: 1_700_000_000_000,
    updatedAtMs: 1_700_000_000_000,
    ...overrides,
  };
}

let seq = 1_000;
function delivery(ep: WebhookEndpoint, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  seq += 1;
  const eventId = randomUUID();
  return {
    id: randomUUID(),
    endpointId: ep.id,
    workspaceId: ep.workspaceId,
    eventId,
    eventType: 'document.version.completed',
    subject: randomUUID(),
    payload: JSON.stringify({ type: 'document.version.completed', timestamp: '2024-01-01T00:00:00.000Z', data: {} }),
    seq,
    status: 'pending',
    attempts: 0,
    nextAttemptAtMs: 1_700_000_000_000,
    createdAtMs: 1_700_000_000_000 + seq,
    updatedAtMs: 1_700_000_000_000 + seq,
    deliveredAtMs: null,
    ...overrides,
  };
}

/** The webhook-store contract (see `WebhookStore`), run against every adapter. */
export function describeWebhookStoreContract(name: string, open: () => Promise<WebhookStoreFixture>): void {
  describe(`webhook store contract: ${name}`, () => {
    let fixture: WebhookStoreFixture;
    let store: WebhookStore;
    beforeAll(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterAll(async () => {
      await store?.close();
      await fixture?.cleanup();
    });

    it('keeps an endpoint with its secret, readable only within its workspace', async () => {
      const ep = endpoint();
      await store.createEndpoint(ep);
      expect(await store.getEndpoint(ep.workspaceId, ep.id)).toEqual(ep);
      expect(await store.getEndpoint('another-workspace', ep.id)).toBeNull();
      expect(await store.listEndpoints('another-workspace')).toEqual([]);
      expect(await store.deleteEndpoint('another-workspace', ep.id)).toBe(false);
      expect(await store.updateEndpoint({ ...ep, workspaceId: 'another-workspace', url: 'https://x.test/' })).toBe(
        false,
      );
      expect(await store.getEndpoint(ep.workspaceId, ep.id)).toEqual(ep);
    });

    it('lists a workspace endpoints oldest first, applies updates and forgets deleted ones', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const older = endpoint({ workspaceId, createdAtMs: 1_000 });
      const newer = endpoint({ workspaceId, createdAtMs: 2_000, events: ['*'] });
      await store.createEndpoint(newer);
      await store.createEndpoint(older);
      expect((await store.listEndpoints(workspaceId)).map((e) => e.id)).toEqual([older.id, newer.id]);

      const disabled = { ...older, enabled: false, disabledReason: 'paused by its owner', updatedAtMs: 3_000 };
      expect(await store.updateEndpoint(disabled)).toBe(true);
      expect(await store.getEndpoint(workspaceId, older.id)).toEqual(disabled);
      const rotated = { ...disabled, secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}`, updatedAtMs: 3_001 };
      expect(await store.updateEndpoint(rotated)).toBe(true);
      expect((await store.getEndpoint(workspaceId, older.id))?.secret).toBe(rotated.secret);

      expect(await store.deleteEndpoint(workspaceId, older.id)).toBe(true);
      expect(await store.getEndpoint(workspaceId, older.id)).toBeNull();
      expect((await store.listEndpoints(workspaceId)).map((e) => e.id)).toEqual([newer.id]);
      expect(await store.deleteEndpoint(workspaceId, older.id)).toBe(false);
    });

    it('enqueues deliveries idempotently: a stored delivery keeps its progress', async () => {
      const ep = endpoint();
      await store.createEndpoint(ep);
      const first = delivery(ep);
      await store.enqueueDeliveries([first]);
      const progressed: WebhookDelivery = { ...first, attempts: 2, nextAttemptAtMs: 1_800_000_000_000, updatedAtMs: 5 };
      await store.saveDelivery(progressed);
      await store.enqueueDeliveries([first, delivery(ep)]);
      expect(await store.getDelivery(ep.workspaceId, first.id)).toEqual(progressed);
      expect(await store.getDelivery('another-workspace', first.id)).toBeNull();
      expect(await store.listDeliveries(ep.workspaceId, ep.id, 10)).toHaveLength(2);
    });

    it('lists pending deliveries by seq and an endpoint deliveries newest first', async () => {
      const ep = endpoint();
      await store.createEndpoint(ep);
      const a = delivery(ep);
      const b = delivery(ep);
      const c = delivery(ep);
      await store.enqueueDeliveries([c, a, b]);
      await store.saveDelivery({ ...b, status: 'delivered', attempts: 1, nextAttemptAtMs: null, deliveredAtMs: 9 });
      const pending = (await store.listPendingDeliveries(100)).filter((d) => d.endpointId === ep.id);
      expect(pending.map((d) => d.id)).toEqual([a.id, c.id]);
      expect((await store.listDeliveries(ep.workspaceId, ep.id, 10)).map((d) => d.id)).toEqual([c.id, b.id, a.id]);
      expect((await store.listDeliveries(ep.workspaceId, ep.id, 1)).map((d) => d.id)).toEqual([c.id]);
      expect(await store.listDeliveries('another-workspace', ep.id, 10)).toEqual([]);

      const summary = await store.pendingSummary();
      expect(summary.count).toBeGreaterThanOrEqual(2);
      expect(summary.oldestCreatedAtMs).not.toBeNull();
      expect(summary.oldestCreatedAtMs as number).toBeLessThanOrEqual(a.createdAtMs);
    });

    it('lists at most the first pending deliveries of each endpoint, so a backlog crowds out no one', async () => {
      const busy = endpoint();
      const quiet = endpoint();
      await store.createEndpoint(busy);
      await store.createEndpoint(quiet);
      const backlog = [delivery(busy), delivery(busy), delivery(busy), delivery(busy)];
      const late = delivery(quiet);
      await store.enqueueDeliveries([...backlog, late]);
      const listed = (await store.listPendingDeliveries(2)).filter(
        (d) => d.endpointId === busy.id || d.endpointId === quiet.id,
      );
      expect(listed.map((d) => d.id)).toEqual([backlog[0]?.id, backlog[1]?.id, late.id]);
    });

    it('records attempts in order per delivery, in whole milliseconds', async () => {
      const ep = endpoint();
      await store.createEndpoint(ep);
      const d = delivery(ep);
      await store.enqueueDeliveries([d]);
      await store.recordAttempt({
        deliveryId: d.id,
        attempt: 2,
        atMs: 20,
        statusCode: 200,
        error: null,
        durationMs: 4.6, // whole milliseconds are kept
      });
      await store.recordAttempt({
        deliveryId: d.id,
        attempt: 1,
        atMs: 10,
        statusCode: null,
        error: 'timeout',
        durationMs: 10_000,
      });
      expect(await store.listAttempts([d.id, 'unknown'])).toEqual([
        { deliveryId: d.id, attempt: 1, atMs: 10, statusCode: null, error: 'timeout', durationMs: 10_000 },
        { deliveryId: d.id, attempt: 2, atMs: 20, statusCode: 200, error: null, durationMs: 5 },
      ]);
      expect(await store.listAttempts([])).toEqual([]);
    });

    it('prunes settled deliveries older than the cut with their attempts, never pending or newer ones', async () => {
      const ep = endpoint();
      await store.createEndpoint(ep);
      const cut = 1_800_000_000_000;
      const oldDelivered = delivery(ep, { status: 'delivered', updatedAtMs: cut - 10, deliveredAtMs: cut - 10 });
      const oldFailed = delivery(ep, { status: 'failed', nextAttemptAtMs: null, updatedAtMs: cut - 5 });
      const oldPending = delivery(ep, { updatedAtMs: cut - 20 });
      const recent = delivery(ep, { status: 'delivered', updatedAtMs: cut, deliveredAtMs: cut });
      await store.enqueueDeliveries([oldDelivered, oldFailed, oldPending, recent]);
      for (const d of [oldDelivered, oldFailed, recent]) {
        await store.recordAttempt({
          deliveryId: d.id,
          attempt: 1,
          atMs: 1,
          statusCode: 500,
          error: null,
          durationMs: 1,
        });
      }
      // A failed delivery retried (saved again as pending) before the prune is kept.
      const retried = delivery(ep, { status: 'failed', nextAttemptAtMs: null, updatedAtMs: cut - 30 });
      await store.enqueueDeliveries([retried]);
      await store.saveDelivery({ ...retried, status: 'pending', nextAttemptAtMs: cut + 1, updatedAtMs: cut + 1 });

      expect(await store.pruneDeliveries(cut)).toBeGreaterThanOrEqual(2);
      expect(await store.getDelivery(ep.workspaceId, oldDelivered.id)).toBeNull();
      expect(await store.getDelivery(ep.workspaceId, oldFailed.id)).toBeNull();
      expect(await store.getDelivery(ep.workspaceId, oldPending.id)).toEqual(oldPending);
      expect(await store.getDelivery(ep.workspaceId, recent.id)).toEqual(recent);
      expect((await store.getDelivery(ep.workspaceId, retried.id))?.status).toBe('pending');
      expect((await store.listAttempts([oldDelivered.id, oldFailed.id, recent.id])).map((a) => a.deliveryId)).toEqual([
        recent.id,
      ]);
      expect((await store.listDeliveries(ep.workspaceId, ep.id, 10)).map((d) => d.id).sort()).toEqual(
        [oldPending.id, recent.id, retried.id].sort(),
      );
      // A pruned id is forgotten: enqueued again, it is stored anew.
      await store.enqueueDeliveries([oldDelivered]);
      expect(await store.getDelivery(ep.workspaceId, oldDelivered.id)).toEqual(oldDelivered);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
