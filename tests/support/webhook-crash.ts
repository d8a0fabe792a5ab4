/**
 * The kill -9 scenario of webhooks, for either runtime: `kb serve` commits a deletion (its event is
 * on the log), starts delivering it to a receiver that does not answer, and is killed with SIGKILL
 * mid-delivery; after a restart the same event is delivered again, with the same webhook-id.
 */
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';

async function api(service: ChildService, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

export async function killedMidDeliveryIsDeliveredAgain(
  env: Record<string, string>,
  cleanups: Array<() => Promise<unknown>>,
): Promise<void> {
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  receiver.answer('/crash', ['hang']);
  const serviceEnv = { ...env, KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_WEBHOOK_TIMEOUT_MS: '120000' };
  const { key } = await createKey(serviceEnv, { workspace: 'hooks', name: 'crash', permissions: 'read,write' });

  let service = await startChild(['serve'], serviceEnv);
  cleanups.push(() => stopChild(service, 'SIGKILL'));
  const endpoint = await api(service, key, 'POST', '/api/v1/webhooks', {
    url: `${receiver.url}/crash`,
    events: ['document.deleted'],
  });
  expect(endpoint.status).toBe(201);
  const form = new FormData();
  form.append('file', new Blob(['A note deleted just before a crash.']), 'crash.md');
  const upload = await fetch(`${service.url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  expect(upload.status).toBe(201);
  const documentId = ((await upload.json()) as { document_id: string }).document_id;
  expect((await api(service, key, 'DELETE', `/api/v1/documents/${documentId}`)).status).toBe(204);

  await receiver.waitFor(() => receiver.to('/crash').length === 1, 60_000);
  const first = receiver.to('/crash')[0];
  await stopChild(service, 'SIGKILL');

  service = await startChild(['serve'], serviceEnv);
  await receiver.waitFor(() => receiver.to('/crash').length >= 2, 60_000);
  const again = receiver.to('/crash')[1];
  expect(again?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
  expect(again?.json).toEqual(first?.json);
  expect(again?.json).toMatchObject({ type: 'document.deleted', data: { document_id: documentId } });
  const verified = new Webhook(endpoint.body.secret).verify(again?.body ?? '', again?.headers ?? {});
  expect(verified).toMatchObject({ type: 'document.deleted' });
  const deliveries = await (async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await api(service, key, 'GET', `/api/v1/webhooks/${endpoint.body.id}/deliveries`);
      if (res.body.deliveries[0]?.status === 'delivered' || Date.now() > deadline) return res.body.deliveries;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]).toMatchObject({ status: 'delivered', event_id: first?.headers['webhook-id'] });
  await stopChild(service);
}
