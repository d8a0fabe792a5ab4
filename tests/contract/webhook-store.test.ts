import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteWebhookStore } from '../../core/ports/webhook-store/sqlite.adapter.ts';
import { describeWebhookStoreContract } from './webhook-store.contract.ts';

describeWebhookStoreContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-webhooks-'));
  return {
    store: createSqliteWebhookStore({ file: path.join(dir, 'webhooks.db') }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('sqlite webhook store', () => {
  it('keeps endpoints and pending deliveries across a reopen of the file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-webhooks-reopen-'));
    const file = path.join(dir, 'webhooks.db');
    const first = createSqliteWebhookStore({ file });
    const ep = {
      id: 'ep-1',
      workspaceId: 'ws',
      url: 'https://hooks.example.com/',
      events: ['*'],
      description: null,
      secret: 'whsec_AAAA',
      enabled: true,
      disabledReason: null,
      failingSinceMs: null,
      createdAtMs: 1,
      updatedAtMs: 1,
    };
    await first.createEndpoint(ep);
    await first.enqueueDeliveries([
      {
        id: 'd-1',
        endpointId: 'ep-1',
        workspaceId: 'ws',
        eventId: 'e-1',
        eventType: 'document.deleted',
        subject: 'doc',
        payload: '{}',
        seq: 1,
        status: 'pending',
        attempts: 0,
        nextAttemptAtMs: 1,
        createdAtMs: 1,
        updatedAtMs: 1,
        deliveredAtMs: null,
      },
    ]);
    await first.close();
    const second = createSqliteWebhookStore({ file });
    expect(await second.getEndpoint('ws', 'ep-1')).toEqual(ep);
    expect((await second.listPendingDeliveries(10)).map((d) => d.eventId)).toEqual(['e-1']);
    await second.close();
    await rm(dir, { recursive: true, force: true });
  });
});
