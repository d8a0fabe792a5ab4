/**
 * A deletion answered 204 while the log refuses its notification is not lost with the process:
 * the notification is recorded pending with the deletion, and the next service on the same data
 * publishes it at start-up, under the id it was recorded with (each webhook delivery's
 * `webhook-id`). On the embedded runtime over a real socket; the log down is a log whose publishes
 * to the notification topic are refused until the process ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineUnavailable } from '../../core/errors/kb-error.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const ENV = { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_WEBHOOK_RETRY_BASE_MS: '30' };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every publish to the notification topic fails from now on, for as long as the process lives. */
function refuseNotifications(svc: TestService): void {
  const log = svc.runtime.ports.log;
  const publish = log.publish.bind(log);
  log.publish = async (topic, messages) => {
    if (topic.endsWith('.notification')) throw engineUnavailable('kafka', `the log refused ${topic}`);
    return publish(topic, messages);
  };
}

describe('notifications of writes answered while the log refused them', () => {
  let receiver: WebhookReceiver;

  it('publishes a deletion’s notification from the next service on the same data, once, under its recorded id', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-outbox-test-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());

    const first = await startTestService({ dataDir, stages: 'none', env: ENV });
    let firstOpen = true;
    cleanups.push(() => (firstOpen ? first.close() : Promise.resolve()));
    const endpoint = await first.request('POST', '/api/v1/webhooks', {
      json: { url: `${receiver.url}/deleted`, events: ['document.deleted'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const created = await first.upload('outbox.txt', 'a document deleted while the log is down');
    expect(created.status, created.text).toBe(201);
    const documentId = created.body.document_id as string;

    refuseNotifications(first);
    const deleted = await first.request('DELETE', `/api/v1/documents/${documentId}`);
    expect(deleted.status, deleted.text).toBe(204);
    expect((await first.request('GET', `/api/v1/documents/${documentId}`)).status).toBe(404);
    // The notification waits in the store, recorded with the deletion.
    const pending = (await first.runtime.ports.documents.listPendingNotifications(100)).filter(
      (entry) => entry.documentId === documentId,
    );
    expect(pending).toHaveLength(1);
    // The service stops without the log having taken it.
    firstOpen = false;
    await first.close();

    const second = await startTestService({ dataDir, stages: 'none', dispatchWebhooks: true, env: ENV });
    cleanups.push(() => second.close());
    const ofDocument = () => receiver.to('/deleted').filter((request) => request.json.data.document_id === documentId);
    await receiver.waitFor(() => ofDocument().length > 0, 30_000);
    const [delivery] = ofDocument();
    expect(delivery?.json).toMatchObject({
      type: 'document.deleted',
      data: { document_id: documentId, workspace_id: first.workspaceId, status: 'deleted', version: 1 },
    });
    expect(delivery?.headers['webhook-id']).toBe(pending[0]?.id);

    // Published once: nothing is left pending, and the endpoint's one delivery of it is done.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const left = await second.runtime.ports.documents.listPendingNotifications(100);
      const listed = await second.request('GET', `/api/v1/webhooks/${endpoint.body.id}/deliveries`, {
        key: (await second.createKey({ permissions: ['read', 'write'], workspaceId: first.workspaceId })).key,
      });
      expect(listed.status, listed.text).toBe(200);
      const done = (listed.body.deliveries as { status: string; event_id: string }[]).filter(
        (entry) => entry.event_id === pending[0]?.id,
      );
      if (left.every((entry) => entry.documentId !== documentId) && done.some((entry) => entry.status === 'delivered'))
        break;
      if (Date.now() > deadline) throw new Error(`still pending: ${JSON.stringify({ left, done })}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ofDocument().map((request) => request.headers['webhook-id'])).toEqual([pending[0]?.id]);
  });
});
