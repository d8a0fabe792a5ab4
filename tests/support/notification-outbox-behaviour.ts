/**
 * Notifications of writes answered while the log refused them, for either runtime: a deletion or
 * purge answered 204 while the log refuses its notification is not lost with the process; the
 * notification is recorded pending with the change, and the next service on the same data (the
 * same engines' names on the distributed runtime) publishes it at start-up, under the id it was
 * recorded with (each webhook delivery's `webhook-id`). The log down is a log whose publishes to
 * the notification topic are refused until the process ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineUnavailable } from '../../core/errors/kb-error.ts';
import type { PendingNotification } from '../../core/ports/document-store/document-store.port.ts';
import { startTestService, type TestService } from './test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** The values in order of their first appearance. */
const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

/** Where the services of one scenario keep their data: extra configuration, and its removal. */
export interface ScenarioStorage {
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

const ENV = { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_WEBHOOK_RETRY_BASE_MS: '30' };

/** What the scenario of the running test opened, closed after it in reverse order. */
const cleanups: Array<() => Promise<unknown>> = [];

/** Every publish to the notification topic fails from now on, for as long as the process lives. */
function refuseNotifications(svc: TestService): void {
  const log = svc.runtime.ports.log;
  const publish = log.publish.bind(log);
  log.publish = async (topic, messages) => {
    if (topic.endsWith('.notification')) throw engineUnavailable('kafka', `the log refused ${topic}`);
    return publish(topic, messages);
  };
}

/**
 * A service on a fresh data directory with a webhook endpoint for `events` and one uploaded
 * document; `restart` stops it (the log never having taken what it refused) and starts the next
 * one on the same data, dispatching webhooks.
 */
async function scenario(storage: ScenarioStorage, events: readonly string[]) {
  cleanups.push(() => storage.cleanup());
  const env = { ...storage.env, ...ENV };
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-outbox-test-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const receiver: WebhookReceiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  const first = await startTestService({ dataDir, stages: 'none', env });
  let firstOpen = true;
  cleanups.push(() => (firstOpen ? first.close() : Promise.resolve()));
  const endpoint = await first.request('POST', '/api/v1/webhooks', {
    json: { url: `${receiver.url}/hook`, events },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  const created = await first.upload('outbox.txt', 'a document removed while the log is down');
  expect(created.status, created.text).toBe(201);
  const documentId = created.body.document_id as string;

  return {
    first,
    documentId,
    /** What the store holds pending for the document. */
    async pending(svc: TestService): Promise<PendingNotification[]> {
      const all = await svc.runtime.ports.documents.listPendingNotifications(100);
      return all.filter((entry) => entry.documentId === documentId);
    },
    /** The document's deliveries received, in order. */
    received: () => receiver.to('/hook').filter((request) => request.json.data.document_id === documentId),
    async restart(): Promise<TestService> {
      firstOpen = false;
      await first.close();
      const second = await startTestService({ dataDir, stages: 'none', dispatchWebhooks: true, env });
      cleanups.push(() => second.close());
      return second;
    },
    waitFor: (count: number) =>
      receiver.waitFor(
        () => receiver.to('/hook').filter((r) => r.json.data.document_id === documentId).length >= count,
      ),
    /** Resolves once nothing is pending and the endpoint lists a delivered delivery of each of `ids`. */
    async settled(svc: TestService, ids: readonly string[]): Promise<void> {
      const key = (await svc.createKey({ permissions: ['read', 'write'], workspaceId: first.workspaceId })).key;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const left = await this.pending(svc);
        const listed = await svc.request('GET', `/api/v1/webhooks/${endpoint.body.id}/deliveries`, { key });
        expect(listed.status, listed.text).toBe(200);
        const delivered = (listed.body.deliveries as { status: string; event_id: string }[])
          .filter((entry) => entry.status === 'delivered')
          .map((entry) => entry.event_id);
        if (left.length === 0 && ids.every((id) => delivered.includes(id))) {
          // One delivery per notification and endpoint, however often a request was attempted.
          const events = (listed.body.deliveries as { event_id: string }[]).map((entry) => entry.event_id);
          expect(events.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
          return;
        }
        if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify({ left, delivered })}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

export function describeNotificationOutbox(runtime: string, storage: () => ScenarioStorage, timeoutMs = 60_000): void {
  describe(`notifications of writes answered while the log refused them (${runtime} runtime)`, () => {
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it(
      'publishes a deletion’s notification from the next service on the same data, under its recorded id only',
      async () => {
        const run = await scenario(storage(), ['document.deleted']);
        const { first, documentId } = run;
        refuseNotifications(first);
        const deleted = await first.request('DELETE', `/api/v1/documents/${documentId}`);
        expect(deleted.status, deleted.text).toBe(204);
        expect((await first.request('GET', `/api/v1/documents/${documentId}`)).status).toBe(404);
        // The notification waits in the store, recorded with the deletion.
        const pending = await run.pending(first);
        expect(pending).toHaveLength(1);

        const second = await run.restart();
        await run.waitFor(1);
        const [delivery] = run.received();
        expect(delivery?.json).toMatchObject({
          type: 'document.deleted',
          data: { document_id: documentId, workspace_id: first.workspaceId, status: 'deleted', version: 1 },
        });
        expect(delivery?.headers['webhook-id']).toBe(pending[0]?.id);
        // Nothing is left pending, and the endpoint's one delivery of it is done. Delivery is at least
        // once, so a request may come again (an attempt retried), but always under the recorded id.
        await run.settled(second, [pending[0]?.id ?? '']);
        expect(distinct(run.received().map((request) => request.headers['webhook-id']))).toEqual([pending[0]?.id]);
      },
      timeoutMs,
    );

    it(
      'publishes a purge’s notification, and the deletion’s still pending before it, from the next service',
      async () => {
        const run = await scenario(storage(), ['document.deleted', 'document.purged']);
        const { first, documentId } = run;
        refuseNotifications(first);
        expect((await first.request('DELETE', `/api/v1/documents/${documentId}`)).status).toBe(204);
        const purged = await first.request('DELETE', `/api/v1/documents/${documentId}?purge=true`);
        expect(purged.status, purged.text).toBe(204);
        const pending = await run.pending(first);
        expect(pending).toHaveLength(2);

        const second = await run.restart();
        await run.waitFor(2);
        const ids = pending.map((entry) => entry.id);
        await run.settled(second, ids);
        const received = run.received();
        expect(distinct(received.map((request) => request.json.type))).toEqual(['document.deleted', 'document.purged']);
        expect(distinct(received.map((request) => request.headers['webhook-id']))).toEqual(ids);
        expect(received.find((request) => request.json.type === 'document.purged')?.json).toMatchObject({
          data: { document_id: documentId, workspace_id: first.workspaceId, status: 'purged', version: 1 },
        });
      },
      timeoutMs,
    );
  });
}
