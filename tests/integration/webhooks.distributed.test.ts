import { describe, it } from 'vitest';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { distributedEnv } from '../support/distributed-env.ts';
import { describeEventStreamBehaviour } from '../support/event-stream-behaviour.ts';
import { startTestService } from '../support/test-service.ts';
import { describeWebhookBehaviour, type OpenTestService } from '../support/webhook-behaviour.ts';
import { killedMidDeliveryIsDeliveredAgain } from '../support/webhook-crash.ts';

/**
 * Webhooks and the event stream on the distributed runtime (Kafka, ClickHouse, OpenSearch, S3):
 * the same promises as on the embedded runtime, each service on names of its own.
 */
const openDistributed: OpenTestService = async (options) => {
  const setup = distributedEnv();
  try {
    const service = await startTestService({ ...options, env: { ...setup.env, ...options.env } });
    return {
      ...service,
      async close() {
        await service.close();
        await setup.cleanup();
      },
    };
  } catch (error) {
    await setup.cleanup();
    throw error;
  }
};

describeWebhookBehaviour('distributed', openDistributed);
describeEventStreamBehaviour('distributed', openDistributed);

describe('webhooks survive a crash (distributed runtime)', () => {
  const cleanups = cleanupsAfterAll();

  it('delivers an event again with the same webhook-id after kill -9 mid-delivery', async () => {
    const setup = distributedEnv();
    cleanups.push(() => setup.cleanup());
    await killedMidDeliveryIsDeliveredAgain(setup.env, cleanups);
  }, 240_000);
});
