import { afterAll, beforeAll } from 'vitest';
import type { SearchView } from '../../core/model/response-views.model.ts';
import {
  describeSearchPromises,
  type SearchClient,
  type SearchCorpus,
  seedSearchCorpus,
} from '../support/search-behaviour.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;
let client: SearchClient;
let corpus: SearchCorpus;

beforeAll(async () => {
  // Small chunks, so the documents have overlapping neighbours to group.
  svc = await startTestService({ env: { KB_CHUNK_TOKENS: '64', KB_CHUNK_OVERLAP: '16' } });
  client = {
    async upload(name, text) {
      const res = await svc.upload(name, text, { type: 'text/markdown' });
      return res.body.document_id as string;
    },
    async waitCompleted(id) {
      await svc.waitForStatus(id, 'completed');
    },
    search: (body) => svc.request<SearchView>('POST', '/api/v1/search', { json: body }),
  };
  corpus = await seedSearchCorpus(client);
}, 300_000);

afterAll(async () => {
  await svc?.close();
});

describeSearchPromises('embedded', () => ({ client, corpus }));
