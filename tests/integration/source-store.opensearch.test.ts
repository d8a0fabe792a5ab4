import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../core/config/config.ts';
import { createOpenSearchSourceStore } from '../../core/ports/source-store/opensearch.adapter.ts';
import { describeSourceStoreContract } from '../contract/source-store.contract.ts';

const url = loadConfig().opensearch.url;
if (url === null) {
  throw new Error('KB_OPENSEARCH_URL is not set: load deploy/native/env, or point it at an OpenSearch');
}
const opensearchUrl: string = url;

describeSourceStoreContract('opensearch', async () => {
  const prefix = `kbtest-sources-${randomUUID()}`;
  const store = await createOpenSearchSourceStore({ url: opensearchUrl, indexPrefix: prefix });
  return {
    store,
    async cleanup() {
      await store.close();
      const response = await fetch(`${opensearchUrl}/${prefix}-source*`, { method: 'DELETE' });
      if (!response.ok) throw new Error(`Cannot delete the test indexes ${prefix}-source*: ${response.status}`);
    },
  };
});
