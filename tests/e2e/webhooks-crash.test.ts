import { describe, it } from 'vitest';
import { tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { killedMidDeliveryIsDeliveredAgain } from '../support/webhook-crash.ts';

describe('webhooks survive a crash (embedded runtime)', () => {
  const cleanups = cleanupsAfterAll();

  it('delivers an event again with the same webhook-id after kill -9 mid-delivery', async () => {
    const data = await tempDir('kb-webhook-crash-');
    cleanups.push(data.remove);
    await killedMidDeliveryIsDeliveredAgain({ KB_DATA_DIR: data.path, KB_BOOTSTRAP_KEY: 'false' }, cleanups);
  }, 180_000);
});
