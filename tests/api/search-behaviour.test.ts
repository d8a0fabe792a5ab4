import { afterAll, beforeAll, describe, it } from 'vitest';
import type { SearchView } from '../../pipeline/services/views.ts';
import {
  expectGrouping,
  expectPageIndependentOfLimit,
  expectPassagesFoundFirst,
  expectWeightsValidated,
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

describe('search on the embedded runtime', () => {
  it('returns the document of a quoted 12-word passage first in keyword and hybrid mode', async () => {
    await expectPassagesFoundFirst(client, corpus);
  });

  it('answers the same first results whatever the page size', async () => {
    await expectPageIndependentOfLimit(client, ['harbour lighthouse keeper', 'the committee approved the budget']);
  });

  it('groups chunks by document when asked and drops overlapping neighbours by default', async () => {
    await expectGrouping(client, 'the river and the old mill');
  });

  it('refuses weights that are zero for both rankings', async () => {
    await expectWeightsValidated(client);
  });
});
