import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../core/config/config.ts';
import { createOpenSearchIdempotencyStore } from '../../core/ports/idempotency-store/opensearch.adapter.ts';
import { describeIdempotencyStoreContract } from '../contract/idempotency-store.contract.ts';

const url = loadConfig().opensearch.url;
if (url === null) {
  throw new Error('KB_OPENSEARCH_URL is not set: load deploy/native/env, or point it at an OpenSearch');
}
const opensearchUrl: string = url;

describeIdempotencyStoreContract('opensearch', async () => {
  const prefix = `kbtest-idempotency-${randomUUID()}`;
  const store = await createOpenSearchIdempotencyStore({ url: opensearchUrl, indexPrefix: prefix });
  return {
    store,
    openAnother: () => createOpenSearchIdempotencyStore({ url: opensearchUrl, indexPrefix: prefix }),
    async cleanup() {
      await store.close();
      const response = await fetch(`${opensearchUrl}/${prefix}-idempotency-keys`, { method: 'DELETE' });
      if (!response.ok) throw new Error(`Cannot delete the test index ${prefix}-idempotency-keys: ${response.status}`);
    },
  };
});
