import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kbResult } from '../../support/child-service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** `kb webhooks add|list|deliveries|remove` against a running service, with and without --json. */
let svc: TestService;
let receiver: WebhookReceiver;
let env: Record<string, string>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  svc = await startTestService({
    stages: 'none',
    dispatchWebhooks: true,
    env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true' },
  });
  env = { KB_API_URL: svc.url, KB_KEY: svc.keys.all, KB_API_KEY: '' };
});
afterAll(async () => {
  await svc?.close();
  await receiver?.close();
});

describe('kb webhooks', () => {
  it('adds an endpoint, lists it, shows its deliveries and removes it', async () => {
    const added = await kbResult(
      ['webhooks', 'add', `${receiver.url}/cli`, '--events', 'document.deleted,document.purged', '--json'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const endpoint = JSON.parse(added.stdout) as { id: string; secret: string; events: string[] };
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.events).toEqual(['document.deleted', 'document.purged']);

    const listed = await kbResult(['webhooks', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).map((w: { id: string }) => w.id)).toContain(endpoint.id);
    const text = await kbResult(['webhooks', 'list'], env);
    expect(text.stdout).toContain(endpoint.id);
    expect(text.stdout).not.toContain(endpoint.secret);

    const up = await svc.upload('cli.md', 'A note the CLI hears about.', {});
    expect((await svc.request('DELETE', `/api/v1/documents/${up.body.document_id}`)).status).toBe(204);
    await receiver.waitFor(() => receiver.to('/cli').length === 1);
    let deliveries: Array<{ status: string; event_type: string }> = [];
    for (let i = 0; i < 50 && deliveries[0]?.status !== 'delivered'; i++) {
      deliveries = JSON.parse((await kbResult(['webhooks', 'deliveries', endpoint.id, '--json'], env)).stdout);
      if (deliveries[0]?.status !== 'delivered') await new Promise((r) => setTimeout(r, 100));
    }
    expect(deliveries[0]).toMatchObject({ status: 'delivered', event_type: 'document.deleted' });
    const table = await kbResult(['webhooks', 'deliveries', endpoint.id], env);
    expect(table.stdout).toMatch(/document\.deleted\s+\S+\s+delivered\s+1\s+200/);

    const removed = await kbResult(['webhooks', 'remove', endpoint.id], env);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Removed webhook ${endpoint.id}`);
    const again = await kbResult(['webhooks', 'remove', endpoint.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('404');
  });

  it('explains what is wrong with the command line', async () => {
    const noAction = await kbResult(['webhooks'], env);
    expect(noAction.code).toBe(2);
    expect(noAction.stderr).toContain('name an action');
    const noKey = await kbResult(['webhooks', 'list'], { KB_API_URL: svc.url, KB_KEY: '', KB_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('needs an API key');
    const badEvents = await kbResult(['webhooks', 'add', `${receiver.url}/x`, '--events', 'nothing.happened'], env);
    expect(badEvents.code).toBe(1);
    expect(badEvents.stderr).toContain('422');
  });
});
