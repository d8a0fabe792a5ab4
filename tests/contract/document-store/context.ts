import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { DocumentRecord, IndexModel, Metadata } from '../../../core/model/document-records.model.ts';
import type { SearchFilters } from '../../../core/model/search-filters.model.ts';
import type { DocumentStore, SearchHit } from '../../../core/ports/document-store/document-store.port.ts';
import { at, chunkInput, type DocOptions, MODEL, newVersion, withVector } from './fixtures.ts';

/** What a contract run needs: a store and a way to dispose of it and its storage. */
export interface DocumentStoreHarness {
  readonly store: DocumentStore;
  /**
   * Another instance on the same storage (as another process would open it), closed by `cleanup`,
   * and how soon the adapter promises that `store.changeMark()` notices that instance's writes.
   */
  readonly second?: { readonly store: DocumentStore; readonly changeBoundMs: number };
  cleanup(): Promise<void>;
}

/**
 * What the aspects of one group of contract tests share: the group's store (open once the group's
 * `beforeAll` has run, so use it inside tests and hooks only) and helpers that write through it.
 */
export interface ContractContext {
  /**
   * The group's store, to keep from the moment the aspects are defined: every member is read from
   * the store the group has open when it is used (inside tests and hooks only).
   */
  readonly store: DocumentStore;
  readonly harness: DocumentStoreHarness | undefined;
  createDoc(workspaceId: string, options?: DocOptions): Promise<DocumentRecord>;
  /** Creates a document whose version 1 holds `contents` and completes (is served) at `servedAt`. */
  servedDoc(
    workspaceId: string,
    contents: readonly string[],
    options?: DocOptions & { servedAt?: string; vectors?: readonly (Float32Array | null)[] },
  ): Promise<DocumentRecord>;
  /** Appends a version holding `contents`; completes it at `completeAt` unless that is null. */
  addVersion(
    doc: DocumentRecord,
    contents: readonly string[],
    options: { completeAt: string | null; metadata?: Metadata; vectors?: readonly (Float32Array | null)[] },
  ): Promise<number>;
  keyword(workspaceId: string, text: string, options?: SearchOptions): Promise<SearchHit[]>;
  nearest(workspaceId: string, vector: Float32Array, options?: SearchOptions): Promise<SearchHit[]>;
}

/** Options of the context's searches: as of an instant (default now), filters (none), limit (20). */
export interface SearchOptions {
  readonly asOf?: string | null;
  readonly filters?: SearchFilters;
  readonly limit?: number;
}

/**
 * Registers, in the current `describe`, the hooks that open a harness with `make` before its tests
 * (setting `indexModel` unless null) and clean it up after them, and returns the group's context.
 */
export function useContractStore(
  make: () => Promise<DocumentStoreHarness>,
  options: { readonly indexModel: IndexModel | null },
): ContractContext {
  let harness: DocumentStoreHarness | undefined;
  const store = new Proxy({} as DocumentStore, {
    get(_target, property) {
      const open = harness?.store;
      if (open === undefined) throw new Error('The contract store is used before its group opened it');
      const value: unknown = Reflect.get(open, property, open);
      return typeof value === 'function' ? value.bind(open) : value;
    },
  });

  beforeAll(async () => {
    harness = await make();
    if (options.indexModel !== null) await store.setIndexModel(options.indexModel);
  });

  afterAll(async () => {
    await harness?.cleanup();
  });

  async function createDoc(workspaceId: string, options: DocOptions = {}): Promise<DocumentRecord> {
    const { id = randomUUID(), source = 'upload', ...version } = options;
    return store.createDocument({ id, workspaceId, source, firstVersion: newVersion(version) });
  }

  /** Creates a document whose version 1 holds `contents` and completes (is served) at `servedAt`. */
  async function servedDoc(
    workspaceId: string,
    contents: readonly string[],
    options: DocOptions & { servedAt?: string; vectors?: readonly (Float32Array | null)[] } = {},
  ): Promise<DocumentRecord> {
    const { servedAt = at(10), vectors = [], ...docOptions } = options;
    const doc = await createDoc(workspaceId, docOptions);
    await store.putChunks(
      contents.map((content, index) => withVector(chunkInput(doc, 1, index, content), vectors[index] ?? null)),
    );
    const result = await store.completeVersion(doc.id, 1, {
      at: servedAt,
      chunkCount: contents.length,
      tokens: 10,
      embeddingModel: MODEL.model,
    });
    expect(result.served).toBe(true);
    return doc;
  }

  /** Appends a version holding `contents`; completes it at `completeAt` unless that is null. */
  async function addVersion(
    doc: DocumentRecord,
    contents: readonly string[],
    options: { completeAt: string | null; metadata?: Metadata; vectors?: readonly (Float32Array | null)[] },
  ): Promise<number> {
    const created = await store.appendVersion(doc.workspaceId, doc.id, (latest) =>
      newVersion({ name: latest.name, mimeType: latest.mimeType, metadata: options.metadata ?? latest.metadata }),
    );
    await store.putChunks(
      contents.map((content, index) =>
        withVector(chunkInput(doc, created.version, index, content), options.vectors?.[index] ?? null),
      ),
    );
    await store.updateVersion(doc.id, created.version, { status: 'processing' });
    if (options.completeAt !== null) {
      await store.completeVersion(doc.id, created.version, {
        at: options.completeAt,
        chunkCount: contents.length,
        tokens: 10,
        embeddingModel: MODEL.model,
      });
    }
    return created.version;
  }

  /** The query fields both searches share, with the contract's defaults. */
  const common = (workspaceId: string, options: SearchOptions) => ({
    workspaceId,
    limit: options.limit ?? 20,
    asOf: options.asOf ?? null,
    filters: options.filters ?? {},
  });

  function keyword(workspaceId: string, text: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    return store.keywordSearch({ ...common(workspaceId, options), text });
  }

  function nearest(workspaceId: string, vector: Float32Array, options: SearchOptions = {}): Promise<SearchHit[]> {
    return store.vectorSearch({ ...common(workspaceId, options), text: '', vector });
  }

  return {
    store,
    get harness() {
      return harness;
    },
    createDoc,
    servedDoc,
    addVersion,
    keyword,
    nearest,
  };
}
