/**
 * A knowledge base with some history for backup and restore tests (uploads with metadata, an
 * update, a rollback, a deletion, a source with item state, a webhook), and what a client sees of
 * it: documents, version histories, the audit log and the top 10 of searches in every mode, now
 * and `as_of` an instant between the edits. Two services answer "the same" when these are equal.
 */
import { expect } from 'vitest';
import type { ApiResponse, RequestOptions } from './test-client.ts';

export type Requester = <T = unknown>(
  method: string,
  pathname: string,
  options?: RequestOptions,
) => Promise<ApiResponse<T>>;
export type Uploader = (
  name: string,
  content: string,
  options: { key: string; metadata?: unknown; documentId?: string },
) => Promise<ApiResponse<{ document_id: string; version: number }>>;

export const QUERIES = ['glacier meltwater lakes', 'volcano lava eruption', 'sourdough bakery oven', 'tidal harbour'];
const MODES = ['keyword', 'semantic', 'hybrid'] as const;

const TEXTS: Record<string, string> = {
  glaciers:
    '# Glaciers\n\nGlaciers carve valleys as the ice moves downhill. Meltwater from the glacier feeds ' +
    'the alpine lakes every summer, and moraines mark where the ice once stood.\n',
  volcanoes:
    '# Volcanoes\n\nA volcano erupts when magma rises through the crust. Lava flows and ash clouds ' +
    'reshape the island, and the crater lake fills after the eruption ends.\n',
  bakery:
    'The bakery opens at six. Sourdough loaves, rye rolls and cinnamon buns come out of the oven ' +
    'before the first customers arrive.\n',
  harbour:
    'The harbour empties at low tide. Fishing boats wait on the mud for the tidal flow to return, ' +
    'and gulls circle above the quay.\n',
};

export interface BuiltKnowledgeBase {
  readonly ids: Record<string, string>;
  /** An instant after the first uploads completed and before the edits. */
  readonly between: string;
}

async function waitCompleted(request: Requester, key: string, id: string, version: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await request<{ status: string; version: number }>('GET', `/api/v1/documents/${id}`, { key });
    if (res.status === 200 && res.body.version === version && res.body.status === 'completed') return;
    if (res.status === 200 && res.body.status === 'failed') throw new Error(`${id} failed: ${res.text}`);
    if (Date.now() > deadline) throw new Error(`${id} v${version} not completed: ${res.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Builds the history through the API with `key` (every permission). */
export async function buildKnowledgeBase(
  request: Requester,
  upload: Uploader,
  key: string,
): Promise<BuiltKnowledgeBase> {
  const ids: Record<string, string> = {};
  for (const [name, text] of Object.entries(TEXTS)) {
    const res = await upload(`${name}.md`, text, { key, metadata: { topic: name, year: 2024 } });
    expect(res.status, res.text).toBe(201);
    ids[name] = res.body.document_id;
  }
  for (const id of Object.values(ids)) await waitCompleted(request, key, id, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const between = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));

  // An update of the glaciers (version 2), then a rollback to version 1 (version 3).
  const updated = await upload('glaciers.md', `${TEXTS.glaciers}\nThe glacier retreats a little every year.\n`, {
    key,
    documentId: ids.glaciers!,
    metadata: { topic: 'glaciers', year: 2025 },
  });
  expect([200, 201], updated.text).toContain(updated.status);
  await waitCompleted(request, key, ids.glaciers!, 2);
  const rolledBack = await request('POST', `/api/v1/documents/${ids.glaciers}/rollback`, {
    key,
    json: { target_version: 1 },
  });
  expect(rolledBack.status, rolledBack.text).toBeLessThan(300);
  await waitCompleted(request, key, ids.glaciers!, 3);
  // Metadata of the volcanoes changed (a new version), the bakery deleted.
  const patched = await request('PATCH', `/api/v1/documents/${ids.volcanoes}`, {
    key,
    json: { metadata: { topic: 'volcanoes', year: 2026, reviewed: true } },
  });
  expect(patched.status, patched.text).toBeLessThan(300);
  await waitCompleted(request, key, ids.volcanoes!, 2);
  const deleted = await request('DELETE', `/api/v1/documents/${ids.bakery}`, { key });
  expect(deleted.status, deleted.text).toBeLessThan(300);

  const source = await request('POST', '/api/v1/sources', {
    key,
    json: { name: 'wiki', kind: 'web', urls: ['http://127.0.0.1:9/page.md'] },
  });
  expect(source.status, source.text).toBe(201);
  const hook = await request('POST', '/api/v1/webhooks', {
    key,
    json: { url: 'http://127.0.0.1:9/hook', events: ['*'], description: 'backup test' },
  });
  expect(hook.status, hook.text).toBe(201);
  return { ids, between };
}

/** Everything a client of the workspace of `key` sees, for comparing two services. */
export async function observe(request: Requester, key: string, built: BuiltKnowledgeBase) {
  const get = async <T>(pathname: string, json?: unknown) => {
    const res = await request<T>(json === undefined ? 'GET' : 'POST', pathname, {
      key,
      ...(json === undefined ? {} : { json }),
    });
    expect(res.status, `${pathname}: ${res.text}`).toBe(200);
    return res.body;
  };
  const documents = await get<{ documents: unknown[] }>('/api/v1/documents?page_size=100');
  const histories: Record<string, unknown> = {};
  for (const [name, id] of Object.entries(built.ids)) {
    // A deleted document's history answers 404 (a problem with its own trace id and time).
    histories[name] = await request('GET', `/api/v1/documents/${id}/versions`, { key }).then((r) =>
      r.status === 200 ? r.body : r.status,
    );
  }
  const audit = await get<unknown>('/api/v1/audit-logs?limit=100');
  const searches: Record<string, unknown> = {};
  for (const query of QUERIES) {
    for (const mode of MODES) {
      for (const asOf of [null, built.between]) {
        const body = await get<{ results: { chunk_id: string; document_id: string; version: number }[] }>(
          '/api/v1/search',
          { query, mode, limit: 10, ...(asOf === null ? {} : { as_of: asOf }) },
        );
        searches[`${mode} ${query}${asOf === null ? '' : ' as_of'}`] = body.results.map((r) => [
          r.chunk_id,
          r.document_id,
          r.version,
        ]);
      }
    }
  }
  const sources = await get<{ sources: unknown[] }>('/api/v1/sources');
  const webhooks = await get<unknown>('/api/v1/webhooks');
  return { documents, histories, audit, searches, sources, webhooks };
}
