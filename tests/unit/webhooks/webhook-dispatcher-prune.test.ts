import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { topicNames, topicSpecs } from '../../../core/events/events.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createSqliteMessageLog } from '../../../core/ports/message-log/sqlite.adapter.ts';
import { createSqliteWebhookStore } from '../../../core/ports/webhook-store/sqlite.adapter.ts';
import type { WebhookDelivery, WebhookStore } from '../../../core/ports/webhook-store/webhook-store.port.ts';
import { startWebhookDispatcher } from '../../../core/webhooks/webhook-dispatcher.ts';

const DAY = 86_400_000;

function settled(status: 'delivered' | 'failed', updatedAtMs: number): WebhookDelivery {
  return {
    id: randomUUID(),
    endpointId: 'endpoint-1',
    workspaceId: 'ws-1',
    eventId: randomUUID(),
    eventType: 'document.version.completed',
    subject: randomUUID(),
    payload: '{}',
    seq: updatedAtMs,
    status,
    attempts: 1,
    nextAttemptAtMs: null,
    createdAtMs: updatedAtMs,
    updatedAtMs,
    deliveredAtMs: status === 'delivered' ? updatedAtMs : null,
  };
}

let dir: string;
let store: WebhookStore;
let log: ReturnType<typeof createSqliteMessageLog>;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-dispatcher-prune-'));
  store = createSqliteWebhookStore({ file: path.join(dir, 'webhooks.db') });
  log = createSqliteMessageLog({ file: path.join(dir, 'log.db') });
});
afterEach(async () => {
  await log.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('webhook dispatcher', () => {
  it('prunes deliveries settled longer ago than the retention, and keeps the recent ones', async () => {
    const now = Date.now();
    const old = [settled('delivered', now - 31 * DAY), settled('failed', now - 40 * DAY)];
    const recent = settled('delivered', now - 29 * DAY);
    await store.enqueueDeliveries([...old, recent]);
    await log.ensureTopics(topicSpecs('kb', 1));
    const dispatcher = await startWebhookDispatcher({
      log,
      store,
      topic: topicNames('kb').notification,
      groupId: 'webhooks',
      policy: { allowPrivate: false },
      retryBaseMs: 1_000,
      timeoutMs: 1_000,
      disableAfterMs: DAY,
      deliveryRetentionMs: 30 * DAY,
      pruneEveryMs: 50,
      userAgent: 'test',
      logger: silentLogger,
    });
    try {
      await expect
        .poll(async () => (await store.getDelivery('ws-1', old[0]?.id ?? '')) === null, { timeout: 5_000 })
        .toBe(true);
      expect(await store.getDelivery('ws-1', old[1]?.id ?? '')).toBeNull();
      expect(await store.getDelivery('ws-1', recent.id)).toEqual(recent);
    } finally {
      await dispatcher.stop();
    }
  });
});
