import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.ts';
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import { indexNames } from '../../core/ports/document-store/opensearch/opensearch-mappings.ts';
import { createOpenSearchDocumentStore } from '../../core/ports/document-store/opensearch.adapter.ts';
import { describeDocumentStoreContract } from '../contract/document-store.contract.ts';
import { createPlainDocument, createServedDocument, plainChunk, plainVersion } from '../support/document-fixtures.ts';

const url = loadConfig().opensearch.url;
if (url === null) {
  throw new Error(
    'KB_OPENSEARCH_URL is not set: start the engines with deploy/native/up and load deploy/native/env, ' +
      'or point it at an OpenSearch with the k-NN plugin',
  );
}
const opensearchUrl: string = url;

/** Deletes the indexes of a store's (random) prefix. */
async function deleteIndexes(prefix: string): Promise<void> {
  const indexes = Object.values(indexNames(prefix)).join(',');
  const response = await fetch(`${opensearchUrl}/${indexes}?ignore_unavailable=true`, { method: 'DELETE' });
  if (!response.ok) {
    throw new Error(`Cannot delete the test indexes ${indexes}: ${response.status} ${await response.text()}`);
  }
}

describeDocumentStoreContract(
  'opensearch',
  async () => {
    const prefix = `kbtest-${randomUUID()}`;
    let store: DocumentStore;
    let second: DocumentStore;
    try {
      store = await createOpenSearchDocumentStore({ url: opensearchUrl, indexPrefix: prefix, changePollMs: 200 });
      second = await createOpenSearchDocumentStore({ url: opensearchUrl, indexPrefix: prefix });
    } catch (error) {
      await deleteIndexes(prefix);
      throw error;
    }
    return {
      store,
      second: { store: second, changeBoundMs: 200 },
      async cleanup() {
        await second.close();
        await store.close();
        await deleteIndexes(prefix);
      },
    };
  },
  { additionalTests: openSearchOnlyTests },
);

const MODEL = { model: 'opensearch-test/embedding-4d', dimensions: 4 };
/** Reads or writes a record the way another process (or an interrupted one) would have left it. */
async function raw(method: string, urlPath: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${opensearchUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * A loopback HTTP proxy to the cluster that holds the first request `hold` picks until
 * `release()`, so a test can order one store's write after another store's change.
 */
async function startGatedProxy(
  target: string,
  hold: (method: string, path: string, body: string) => boolean,
): Promise<{ url: string; held: Promise<void>; release(): void; close(): Promise<void> }> {
  let signalHeld = () => {};
  const held = new Promise<void>((resolve) => {
    signalHeld = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding = false;
  const server = http.createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const body = Buffer.concat(parts);
      const method = request.method ?? 'GET';
      const urlPath = request.url ?? '/';
      const forward = async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) {
            headers[name] = value;
          }
        }
        const answer = await fetch(`${target}${urlPath}`, {
          method,
          headers,
          ...(body.length > 0 ? { body } : {}),
        });
        const content = Buffer.from(await answer.arrayBuffer());
        const contentType = answer.headers.get('content-type');
        response.writeHead(answer.status, contentType === null ? {} : { 'content-type': contentType });
        response.end(method === 'HEAD' ? undefined : content);
      };
      const gate = !holding && hold(method, urlPath, body.toString('utf8'));
      if (gate) {
        holding = true;
        signalHeld();
      }
      (gate ? released.then(forward) : forward()).catch((error: unknown) => {
        response.writeHead(502);
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held,
    release,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Tests of the OpenSearch adapter alone, on indexes of their own: data kept for a store opened
 * later, concurrent and interrupted writes of several stores, the result window, an unreachable
 * cluster.
 */
function openSearchOnlyTests(): void {
  describe('OpenSearch document store', () => {
    const prefixes: string[] = [];
    const stores: DocumentStore[] = [];
    let prefix: string;
    let store: DocumentStore;

    async function open(
      indexPrefix: string,
      extra: { maxResultWindow?: number; url?: string } = {},
    ): Promise<DocumentStore> {
      if (!prefixes.includes(indexPrefix)) prefixes.push(indexPrefix);
      const opened = await createOpenSearchDocumentStore({ url: opensearchUrl, indexPrefix, ...extra });
      stores.push(opened);
      return opened;
    }

    beforeAll(async () => {
      prefix = `kbtest-${randomUUID()}`;
      store = await open(prefix);
      await store.setIndexModel(MODEL);
    });

    afterAll(async () => {
      for (const opened of stores) await opened.close();
      for (const indexPrefix of prefixes) await deleteIndexes(indexPrefix);
    });

    const served = (workspaceId: string, content: string, metadata: Record<string, unknown> = {}) =>
      createServedDocument(store, workspaceId, content, metadata);

    const keyword = (workspaceId: string, text: string, asOf: string | null = null) =>
      store.keywordSearch({ workspaceId, text, limit: 20, asOf, filters: {} });

    it('keeps documents and the index model for a store opened later on the same indexes', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await served(workspaceId, 'persistent lighthouse');
      const reopened = await open(prefix);
      expect(await reopened.getIndexModel()).toEqual(MODEL);
      expect((await reopened.getDocument(workspaceId, doc.id))?.servedVersion).toBe(1);
      const hits = await reopened.keywordSearch({ workspaceId, text: 'lighthouse', limit: 5, asOf: null, filters: {} });
      expect(hits.map((hit) => hit.chunk.id)).toEqual([`${doc.id}:1:0`]);
    });

    it('answers a record its index cannot read now (shards recovering after a restart) with a retriable error, not as absent', async () => {
      const ownPrefix = `kbtest-${randomUUID()}`;
      const own = await open(ownPrefix);
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(own, workspaceId);
      // A closed index answers `_mget` with an error per record, as one whose shards are not allocated yet does.
      await raw('POST', `/${indexNames(ownPrefix).versions}/_close`);
      try {
        await expect(own.getVersion(doc.id, 1)).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });
        await expect(own.getDocumentAndVersion(workspaceId, doc.id, 1)).rejects.toMatchObject({
          code: 'engine-unavailable',
        });
      } finally {
        await raw('POST', `/${indexNames(ownPrefix).versions}/_open?wait_for_active_shards=1`);
      }
      expect(await own.getVersion(doc.id, 1)).toMatchObject({ documentId: doc.id, version: 1 });
    });

    it('holds the notifications of a purge cut off half-way until a later purge finishes it, under the first one’s id', async () => {
      const ownPrefix = `kbtest-${randomUUID()}`;
      const own = await open(ownPrefix);
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(own, workspaceId);
      const draft = (label: string) => () => ({ id: `${label}-${randomUUID()}`, body: JSON.stringify({ label }) });
      const first = draft('first');
      let firstId = '';
      // The chunks index unavailable: the purge fails after it recorded its notification.
      await raw('POST', `/${indexNames(ownPrefix).chunks}/_close`);
      try {
        await expect(
          own.purge(workspaceId, doc.id, (changed) => {
            const made = first();
            firstId = made.id;
            expect(changed.id).toBe(doc.id);
            return made;
          }),
        ).rejects.toThrow();
      } finally {
        await raw('POST', `/${indexNames(ownPrefix).chunks}/_open?wait_for_active_shards=1`);
      }
      expect(firstId).not.toBe('');
      // The document is still there: its purge's notification is not told yet.
      expect(await own.getDocument(workspaceId, doc.id)).not.toBeNull();
      expect(await own.listPendingNotifications(100)).toEqual([]);
      let called = false;
      expect(
        await own.purge(workspaceId, doc.id, () => {
          called = true;
          return draft('second')();
        }),
      ).toBe(true);
      expect(called).toBe(false);
      expect((await own.listPendingNotifications(100)).map((pending) => pending.id)).toEqual([firstId]);
    });

    it('gives appends from two stores on the same indexes distinct, gap-free numbers', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const second = await open(prefix);
      const doc = await createPlainDocument(store, workspaceId);
      const appends = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          (n % 2 === 0 ? store : second).appendVersion(workspaceId, doc.id, () => plainVersion()),
        ),
      );
      expect(appends.map((v) => v.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, n) => n + 2));
      expect((await second.getDocument(workspaceId, doc.id))?.latestVersion).toBe(13);
    });

    it('serves chunks whose write raced with the completion of their version', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(store, workspaceId);
      // A second store whose chunk write reaches the engine only after the completion has finished:
      // it read the version as not yet served, and the completion found no chunks to update.
      const proxy = await startGatedProxy(
        opensearchUrl,
        (method, urlPath, body) => method === 'POST' && urlPath.startsWith('/_bulk') && body.includes('racing kestrel'),
      );
      try {
        const writer = await open(prefix, { url: proxy.url });
        const writing = writer.putChunks(
          [0, 1, 2].map((index) => plainChunk(doc, 1, index, `racing kestrel ${index}`)),
        );
        await proxy.held;
        expect(
          await store.completeVersion(doc.id, 1, {
            at: '2024-05-01T10:05:00.000Z',
            chunkCount: 3,
            tokens: 6,
            embeddingModel: null,
          }),
        ).toMatchObject({ served: true });
        proxy.release();
        await writing;
      } finally {
        proxy.release();
        await proxy.close();
      }
      const hits = await keyword(workspaceId, 'kestrel');
      expect(hits.map((hit) => hit.chunk.id).sort()).toEqual([0, 1, 2].map((index) => `${doc.id}:1:${index}`));
      expect(hits.every((hit) => hit.documentName === 'notes.txt')).toBe(true);
    });

    it('adopts a version left behind by an interrupted append', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(store, workspaceId);
      // Version 2 was allocated, but its append stopped before advancing the document.
      const first = (await raw('GET', `/${prefix}-versions/_doc/${doc.id}:1`))._source as Record<string, unknown>;
      await raw('PUT', `/${prefix}-versions/_doc/${doc.id}:2?refresh=true`, {
        ...first,
        version: 2,
        name: 'orphan.txt',
      });
      const appended = await store.appendVersion(workspaceId, doc.id, () => plainVersion({ name: 'third.txt' }));
      expect(appended.version).toBe(3);
      expect((await store.listVersions(workspaceId, doc.id)).map((v) => [v.version, v.name])).toEqual([
        [3, 'third.txt'],
        [2, 'orphan.txt'],
        [1, 'notes.txt'],
      ]);
      expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(3);
    });

    it('finds the version of an append cut off before it advanced the document by its key, and finishes the append', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(store, workspaceId);
      const first = (await raw('GET', `/${prefix}-versions/_doc/${doc.id}:1`))._source as Record<string, unknown>;
      await raw('PUT', `/${prefix}-versions/_doc/${doc.id}:2`, { ...first, version: 2, write_key: 'cut-off' });
      expect(await store.findWrite(workspaceId, 'cut-off')).toEqual({
        kind: 'version',
        documentId: doc.id,
        version: 2,
      });
      expect((await store.getDocument(workspaceId, doc.id))?.latestVersion).toBe(2);
    });

    it('finds no write of a creation cut off before its document was recorded', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await createPlainDocument(store, workspaceId);
      const first = (await raw('GET', `/${prefix}-versions/_doc/${doc.id}:1`))._source as Record<string, unknown>;
      const lonely = randomUUID();
      await raw('PUT', `/${prefix}-versions/_doc/${lonely}:1`, { ...first, document_id: lonely, write_key: 'half' });
      expect(await store.findWrite(workspaceId, 'half')).toBeNull();
    });

    it('copies the status to the document when a completion cut off after it marked the version is retried', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await served(workspaceId, 'a completion cut off before its copy');
      // The document's copy of the status as the process killed before it left it.
      await raw('POST', `/${prefix}-documents/_update/${doc.id}?refresh=true`, { doc: { status: 'processing' } });
      expect((await store.listDocuments({ workspaceId, status: 'processing', limit: 10 })).total).toBe(1);
      await store.completeVersion(doc.id, 1, {
        at: new Date().toISOString(),
        chunkCount: 1,
        tokens: 1,
        embeddingModel: null,
      });
      expect((await store.listDocuments({ workspaceId, status: 'processing', limit: 10 })).total).toBe(0);
      expect((await store.listDocuments({ workspaceId, status: 'completed', limit: 10 })).total).toBe(1);
    });

    it('finishes an interrupted completion when it is retried', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await served(workspaceId, 'osprey original');
      await store.appendVersion(workspaceId, doc.id, () => plainVersion());
      await store.putChunks([plainChunk(doc, 2, 0, 'osprey revised')]);
      // The completion of version 2 recorded the hand-over on the document, then stopped.
      const stored = (await raw('GET', `/${prefix}-documents/_doc/${doc.id}`))._source as Record<string, unknown>;
      await raw('PUT', `/${prefix}-documents/_doc/${doc.id}?refresh=true`, {
        ...stored,
        served: [...(stored.served as unknown[]), { version: 2, from: '2024-05-01T11:00:00.000Z' }],
        served_version: 2,
        rev: (stored.rev as number) + 1,
      });
      const retried = await store.completeVersion(doc.id, 2, {
        at: '2024-05-01T11:30:00.000Z',
        chunkCount: 1,
        tokens: 2,
        embeddingModel: null,
      });
      expect(retried).toMatchObject({ served: true, completed: { completedAt: '2024-05-01T11:30:00.000Z' } });
      expect((await store.getVersion(doc.id, 1))?.servedUntil).toBe('2024-05-01T11:00:00.000Z');
      expect(await store.getVersion(doc.id, 2)).toMatchObject({
        status: 'completed',
        servedFrom: '2024-05-01T11:00:00.000Z',
        servedUntil: null,
      });
      expect((await keyword(workspaceId, 'osprey')).map((hit) => hit.chunk.id)).toEqual([`${doc.id}:2:0`]);
      expect((await keyword(workspaceId, 'osprey', '2024-05-01T10:30:00.000Z')).map((hit) => hit.chunk.id)).toEqual([
        `${doc.id}:1:0`,
      ]);
    });

    it('refuses zero chunk vectors', async () => {
      const workspaceId = `ws-${randomUUID()}`;
      const doc = await served(workspaceId, 'vector holder');
      await expect(store.putChunks([plainChunk(doc, 1, 1, 'zero', new Float32Array(4))])).rejects.toMatchObject({
        code: 'bad-request',
      });
      expect(await store.getChunk(`${doc.id}:1:1`)).toBeNull();
    });

    it('pages with offsets beyond the result window', async () => {
      const small = await open(`kbtest-${randomUUID()}`, { maxResultWindow: 4 });
      const workspaceId = `ws-${randomUUID()}`;
      for (let minute = 0; minute < 11; minute += 1) {
        await createPlainDocument(small, workspaceId, {
          createdAt: new Date(Date.UTC(2024, 4, 1, 10, minute)).toISOString(),
        });
      }
      const all: string[] = [];
      let after: { createdAt: string; id: string } | undefined;
      for (let round = 0; round < 10; round += 1) {
        const page = await small.listDocuments({ workspaceId, limit: 4, ...(after ? { after } : {}) });
        if (page.documents.length === 0) break;
        all.push(...page.documents.map((doc) => doc.id));
        const last = page.documents[page.documents.length - 1]!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(all).toHaveLength(11);
      for (const offset of [0, 3, 5, 9, 10]) {
        const page = await small.listDocuments({ workspaceId, limit: 3, offset });
        expect(page.total).toBe(11);
        expect(page.documents.map((doc) => doc.id)).toEqual(all.slice(offset, offset + 3));
      }
      expect(await small.listDocuments({ workspaceId, limit: 3, offset: 11 })).toEqual({ documents: [], total: 11 });
    });

    it('reports an unreachable cluster as a retriable engine-unavailable error', async () => {
      await expect(
        createOpenSearchDocumentStore({ url: 'http://127.0.0.1:9', indexPrefix: `kbtest-${randomUUID()}` }),
      ).rejects.toMatchObject({ code: 'engine-unavailable', retriable: true });
    });
  });
}
