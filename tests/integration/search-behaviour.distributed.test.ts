import { afterAll, beforeAll } from 'vitest';
import type { SearchView } from '../../core/model/response-views.model.ts';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import {
  describeSearchPromises,
  type SearchClient,
  type SearchCorpus,
  seedSearchCorpus,
} from '../support/search-behaviour.ts';

/** The search promises of the embedded API suite (tests/api/search-behaviour.test.ts), on OpenSearch. */
let setup: DistributedEnv;
let service: ChildService;
let client: SearchClient;
let corpus: SearchCorpus;

beforeAll(async () => {
  setup = distributedEnv();
  const env = { ...setup.env, KB_CHUNK_TOKENS: '64', KB_CHUNK_OVERLAP: '16' };
  const { key } = await createKey(env, {
    workspace: 'search',
    name: 'search',
    permissions: 'read,search,write',
    plan: 'enterprise',
  });
  service = await startChild(['serve', '--stages', 'all'], env, { timeoutMs: 120_000 });
  const call = async (method: string, pathname: string, body?: FormData | Record<string, unknown>) => {
    const json = body !== undefined && !(body instanceof FormData);
    const res = await fetch(`${service.url}${pathname}`, {
      method,
      headers: { 'x-api-key': key, ...(json ? { 'content-type': 'application/json' } : {}) },
      ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as FormData) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  client = {
    async upload(name, text) {
      const form = new FormData();
      form.append('file', new Blob([text], { type: 'text/markdown' }), name);
      return String((await call('POST', '/api/v1/documents', form)).body.document_id);
    },
    async waitCompleted(id) {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const { body } = await call('GET', `/api/v1/documents/${id}`);
        if (body.status === 'completed') return;
        if (body.status === 'failed' || Date.now() > deadline)
          throw new Error(`document ${id}: ${JSON.stringify(body)}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    },
    async search(body) {
      const res = await call('POST', '/api/v1/search', body);
      return { status: res.status, body: res.body as unknown as SearchView };
    },
  };
  corpus = await seedSearchCorpus(client);
}, 600_000);

afterAll(async () => {
  if (service) await stopChild(service);
  await setup?.cleanup();
}, 120_000);

describeSearchPromises('distributed', () => ({ client, corpus }));
