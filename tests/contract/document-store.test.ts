import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../../core/ports/document-store/document-store.port.ts';
import { DOCUMENT_STORE_MIGRATIONS } from '../../core/ports/document-store/sqlite/sqlite-schema.ts';
import { createSqliteDocumentStore } from '../../core/ports/document-store/sqlite.adapter.ts';
import { migrate, openDatabase } from '../../core/ports/sqlite/open-database.ts';
import { createPlainDocument, createServedDocument, plainVersion } from '../support/document-fixtures.ts';
import { describeDocumentStoreContract } from './document-store.contract.ts';

describeDocumentStoreContract(
  'sqlite',
  async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-document-store-'));
    const store = createSqliteDocumentStore({ file: path.join(dir, 'documents.sqlite') });
    // Another connection to the same file sees a write at once (`PRAGMA data_version`).
    const second = createSqliteDocumentStore({ file: path.join(dir, 'documents.sqlite') });
    return {
      store,
      second: { store: second, changeBoundMs: 0 },
      async cleanup() {
        await second.close();
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  { additionalTests: sqliteOnlyTests },
);

// The same contract with every vector query answered through the HNSW index (no exact-scan shortcut).
describeDocumentStoreContract('sqlite with the HNSW vector index', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-document-store-'));
  const store = createSqliteDocumentStore({
    file: path.join(dir, 'documents.sqlite'),
    vectorIndex: { exactBelow: 0, expansionSearch: 64 },
  });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

// The same contract with keyword queries answered through the keyword index (caught up before each
// query), falling back to exact FTS5 queries only where the index cannot answer exactly.
describeDocumentStoreContract('sqlite with the keyword index', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-document-store-'));
  const store = createSqliteDocumentStore({
    file: path.join(dir, 'documents.sqlite'),
    keywordIndex: { syncBelow: 100_000 },
  });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const MODEL = { model: 'sqlite-test/embedding-4d', dimensions: 4 };

/**
 * Tests of the SQLite adapter alone, each on a database file of its own: data kept across a reopen,
 * two connections to one file, and its own answers beyond the shared contract.
 */
function sqliteOnlyTests(): void {
  describe('SQLite document store', () => {
    let dir: string;
    let file: string;
    let store: DocumentStore;

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'kb-document-store-'));
      file = path.join(dir, 'nested', 'documents.sqlite');
      store = createSqliteDocumentStore({ file });
      await store.setIndexModel(MODEL);
    });

    afterEach(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });

    const served = (workspaceId: string, content: string, metadata: Record<string, unknown> = {}) =>
      createServedDocument(store, workspaceId, content, metadata);

    it('setting the model it already is writes nothing: the change mark (list caches) stays', async () => {
      const before = store.changeMark();
      await store.setIndexModel(MODEL);
      await store.setIndexModel({ ...MODEL });
      expect(store.changeMark()).toBe(before);
      expect(await store.getIndexModel()).toEqual(MODEL);
      // Another model (the index holds no vectors yet) is still written.
      const other = { ...MODEL, dimensions: MODEL.dimensions + 1 };
      await store.setIndexModel(other);
      expect(store.changeMark()).not.toBe(before);
      expect(await store.getIndexModel()).toEqual(other);
    });

    it('keeps its data across close and reopen of the file', async () => {
      const doc = await served('ws-a', 'persistent lighthouse', { kept: true });
      await store.close();
      store = createSqliteDocumentStore({ file });
      expect(await store.getIndexModel()).toEqual(MODEL);
      expect((await store.getDocument('ws-a', doc.id))?.servedVersion).toBe(1);
      const hits = await store.keywordSearch({
        workspaceId: 'ws-a',
        text: 'lighthouse',
        limit: 5,
        asOf: null,
        filters: {},
      });
      expect(hits.map((hit) => hit.chunk.id)).toEqual([`${doc.id}:1:0`]);
    });

    it('lets two connections to one file share documents and version numbers', async () => {
      const second = createSqliteDocumentStore({ file });
      try {
        const doc = await createPlainDocument(store, 'ws-a');
        const appends = await Promise.all(
          Array.from({ length: 10 }, (_, n) =>
            (n % 2 === 0 ? store : second).appendVersion('ws-a', doc.id, () => plainVersion()),
          ),
        );
        expect(appends.map((v) => v.version).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        expect((await second.getDocument('ws-a', doc.id))?.latestVersion).toBe(11);
      } finally {
        await second.close();
      }
    });

    it('refuses to archive the version it serves now', async () => {
      const doc = await served('ws-r', 'current content', {});
      await expect(store.archiveVersion(doc.id, 1, '2024-06-01T00:00:00.000Z')).rejects.toMatchObject({
        code: 'conflict',
      });
      expect((await store.listChunks(doc.id, 1, { afterIndex: -1, limit: 5 })).total).toBe(1);
    });

    it('answers a completion of an unknown version with served false', async () => {
      expect(
        await store.completeVersion(randomUUID(), 1, {
          at: '2024-05-01T10:00:00.000Z',
          chunkCount: 0,
          tokens: 0,
          embeddingModel: null,
        }),
      ).toEqual({ served: false, completed: null });
    });

    it('keeps the cached vectors of a database whose vector cache predates its rowid table', async () => {
      const older = path.join(dir, 'older.sqlite');
      const db = openDatabase(older);
      for (const migration of DOCUMENT_STORE_MIGRATIONS.filter((m) => m.name < 'document-store-010'))
        migrate(db, migration.name, migration.statements);
      const kept = new Float32Array([0.5, 0.5, 0.5, 0.5]);
      db.prepare('INSERT INTO vector_cache (model, content_hash, vector) VALUES (?, ?, ?)').run(
        MODEL.model,
        'a'.repeat(64),
        Buffer.from(kept.buffer),
      );
      db.close();

      const reopened = createSqliteDocumentStore({ file: older });
      try {
        expect(await reopened.getCachedVectors(MODEL.model, ['a'.repeat(64)])).toEqual(
          new Map([['a'.repeat(64), kept]]),
        );
        // Upserts by (model, content hash), as before.
        const replaced = new Float32Array([1, 0, 0, 0]);
        await reopened.putCachedVectors(MODEL.model, new Map([['a'.repeat(64), replaced]]));
        await reopened.putCachedVectors(MODEL.model, new Map([['b'.repeat(64), kept]]));
        expect(await reopened.getCachedVectors(MODEL.model, ['a'.repeat(64), 'b'.repeat(64)])).toEqual(
          new Map([
            ['a'.repeat(64), replaced],
            ['b'.repeat(64), kept],
          ]),
        );
      } finally {
        await reopened.close();
      }
    });
  });
}
