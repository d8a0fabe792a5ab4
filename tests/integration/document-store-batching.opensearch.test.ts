import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.ts';
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import { indexNames } from '../../core/ports/document-store/opensearch/opensearch-mappings.ts';
import { createOpenSearchDocumentStore } from '../../core/ports/document-store/opensearch.adapter.ts';
import { type EngineRequestCount, engineRequestCounts, engineRequestGrowth } from '../../core/util/engine-requests.ts';
import { createPlainDocument } from '../support/document-fixtures.ts';

/**
 * The OpenSearch store coalesces the lookups by id and the single-record writes of concurrent
 * callers (the stage handlers of the documents of a delivered batch) into shared `_mget` and
 * `_bulk` requests, each caller still getting its own answer, and one caller's failure its own.
 */
const url = loadConfig().opensearch.url as string;
const prefix = `kbtest-${randomUUID()}`;
let store: DocumentStore;

beforeAll(async () => {
  store = await createOpenSearchDocumentStore({ url, indexPrefix: prefix });
});
afterAll(async () => {
  await store?.close();
  const indexes = Object.values(indexNames(prefix)).join(',');
  await fetch(`${url}/${indexes}?ignore_unavailable=true`, { method: 'DELETE' });
});

function requests(growth: readonly EngineRequestCount[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of growth) if (c.engine === 'opensearch') out[c.operation] = (out[c.operation] ?? 0) + c.count;
  return out;
}

describe('opensearch store: concurrent callers share requests', () => {
  it('looks up and updates 60 documents at once in a few _mget and _bulk requests, each caller answered alone', async () => {
    const workspaceId = `ws-${randomUUID()}`;
    const documents = await Promise.all(Array.from({ length: 60 }, () => createPlainDocument(store, workspaceId)));

    const before = engineRequestCounts();
    const found = await Promise.all(documents.map((d) => store.getDocumentAndVersion(workspaceId, d.id, 1)));
    expect(found.map((f) => f.document?.id)).toEqual(documents.map((d) => d.id));
    expect(found.every((f) => f.version?.version === 1)).toBe(true);

    // One of the updates is of a version that does not exist: it alone answers null.
    const updated = await Promise.all([
      ...documents.map((d, i) =>
        store.updateVersion(d.id, 1, { progress: { stage: 'embed', chunksDone: i, chunksTotal: 60 } }),
      ),
      store.updateVersion(documents[0]?.id as string, 9, { status: 'processing' }),
    ]);
    expect(updated.at(-1)).toBeNull();
    expect(updated.slice(0, -1).map((v) => v?.progress?.chunksDone)).toEqual(documents.map((_, i) => i));

    const sent = requests(engineRequestGrowth(before, engineRequestCounts()));
    // Without coalescing: 60 _mget, then 61 updates plus their status mirrors, one request each.
    expect(sent._doc ?? 0).toBe(0);
    expect(sent._update ?? 0).toBe(0);
    expect(sent._mget ?? 0).toBeLessThanOrEqual(10);
    const total = Object.values(sent).reduce((a, b) => a + b, 0);
    expect(total).toBeLessThan(40);

    const reread = await store.getVersion(documents[7]?.id as string, 1);
    expect(reread?.progress?.chunksDone).toBe(7);
  });
});
