import { createClickHouseWebhookStore } from '../../core/ports/webhook-store/clickhouse.adapter.ts';
import { describeWebhookStoreContract } from '../contract/webhook-store.contract.ts';
import { clickhouseTestOptions, dropClickHouseDatabase } from '../support/clickhouse-test-db.ts';

describeWebhookStoreContract('clickhouse', async () => {
  const options = clickhouseTestOptions();
  return { store: await createClickHouseWebhookStore(options), cleanup: () => dropClickHouseDatabase(options) };
});
