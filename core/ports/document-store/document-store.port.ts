import type {
  ChunkRecord,
  DocumentRecord,
  IndexModel,
  IngestError,
  IngestProgress,
  Metadata,
  VersionRecord,
  VersionStatus,
} from '../../model/document-records.model.ts';
import { SOURCE_ITEM_LOOKUP_MAX } from '../../model/document-records.model.ts';
import type { SearchFilters } from '../../model/search-filters.model.ts';
import type { DocumentTransfer } from './document-transfer.ts';
import type { NotificationDraft, NotificationOutbox } from './notification-outbox.ts';

export type { DocumentSnapshot, DocumentTransfer, StoredChunk, StoredDocument } from './document-transfer.ts';
export type { NotificationDraft, NotificationOutbox, PendingNotification } from './notification-outbox.ts';

/**
 * Fields of a new version; the store sets `version`, `status: pending` and the derived fields.
 * `writeKey` (not part of the record) names the request that writes it, for {@link VersionStore.findWrite}.
 */
export type NewVersion = { readonly writeKey?: string } & Pick<
  VersionRecord,
  | 'name'
  | 'mimeType'
  | 'sizeBytes'
  | 'contentHash'
  | 'storageKey'
  | 'metadata'
  | 'changeReason'
  | 'restoredFrom'
  | 'createdBy'
  | 'createdAt'
>;

/**
 * A change found by the key its request stored with it ({@link VersionStore.findWrite}): the
 * version a `createDocument` or `appendVersion` created, or a document's deletion.
 */
export interface RecordedWrite {
  readonly kind: 'version' | 'deletion';
  readonly documentId: string;
  /** The version created; for a deletion, the document's latest version when it was deleted. */
  readonly version: number;
}

export interface NewDocument {
  readonly id: string;
  readonly workspaceId: string;
  readonly source: string;
  /** The item within `source` (see {@link DocumentRecord.sourceItem}); absent: none. */
  readonly sourceItem?: string;
  readonly firstVersion: NewVersion;
}

/** One (source, item) pair asked of {@link VersionStore.lookupSourceItems}. */
export interface SourceItemKey {
  readonly source: string;
  readonly sourceItem: string;
}

export { SOURCE_ITEM_LOOKUP_MAX };

export interface VersionPatch {
  readonly status?: VersionStatus;
  readonly error?: IngestError | null;
  readonly progress?: IngestProgress | null;
  readonly chunkCount?: number;
  readonly tokens?: number;
  readonly embeddingModel?: string | null;
}

export interface ChunkInput extends ChunkRecord {
  readonly vector: Float32Array | null;
}

export interface DocumentListQuery {
  readonly workspaceId: string;
  readonly status?: VersionStatus;
  readonly source?: string;
  readonly createdAfter?: string;
  readonly createdBefore?: string;
  readonly limit: number;
  /** Cursor mode: documents strictly after this position in (`createdAt` desc, `id` desc) order. */
  readonly after?: { readonly createdAt: string; readonly id: string };
  /** Offset mode: skip this many. */
  readonly offset?: number;
  /**
   * The total of the same filters as the caller counted it under the current
   * {@link VersionStore.changeMark}: the adapter returns it instead of counting again.
   */
  readonly knownTotal?: number;
}

export interface StoreSearchQuery {
  readonly workspaceId: string;
  /** Keyword search: the query text (the adapter tokenises it). */
  readonly text: string;
  /** Vector search: the query vector (unit length). */
  readonly vector?: Float32Array;
  /** How many hits to return at most. */
  readonly limit: number;
  /** Null: the versions served now. Otherwise: the versions served at that instant (ISO 8601). */
  readonly asOf: string | null;
  readonly filters: SearchFilters;
}

export interface SearchHit {
  readonly chunk: ChunkRecord;
  /** Keyword: BM25 (higher is better). Vector: cosine similarity in [-1, 1]. */
  readonly score: number;
  readonly documentName: string;
  readonly documentMetadata: Metadata;
  readonly mimeType: string;
}

/** What a version's ingestion produced, recorded when it completes. */
export interface CompletionResult {
  readonly at: string;
  readonly chunkCount: number;
  readonly tokens: number;
  readonly embeddingModel: string | null;
}

/**
 * What a completion left: whether the version is served, and the completed version as the store
 * now holds it (what a `document.version.completed` notification tells), so that the caller need not
 * read it back. `completed` is null when the version did not end `completed` (it is gone, or its
 * document is).
 */
export interface CompletionOutcome {
  readonly served: boolean;
  readonly completed: {
    readonly name: string;
    /** The version's `completedAt`: this call's `at`, or an earlier completion's. */
    readonly completedAt: string;
    /** Its document's `source`. */
    readonly source: string;
  } | null;
}

/**
 * Documents and their versions: creation, version allocation, status, served-time bookkeeping,
 * listing, deletion.
 *
 * Contract:
 * - Version numbers of a document start at 1 and are gap-free and distinct under concurrent
 *   `appendVersion` calls (atomic increment or optimistic concurrency with retry).
 * - Served-time bookkeeping (as README's quick start shows with `as_of`) lives here: `completeVersion` makes a version served
 *   unless a newer version is already served or the document is deleted (a stale completion
 *   never makes an older version current); the previously served version's `servedUntil` and
 *   the new one's `servedFrom` are the same instant. Calling it again changes nothing.
 * - A soft-deleted document is invisible to `getDocument`/`listDocuments` and to current search
 *   at once; `asOf` searches before the deletion still see it. `purge` removes everything
 *   (versions, chunks and vectors included).
 * - `createDocument` and `appendVersion`: `getDocument` and this instance's `listDocuments` see the
 *   change when the promise resolves; another instance's `listDocuments` within the adapter's
 *   refresh bound (OpenSearch: the documents index's refresh interval), as its `changeMark` does.
 * - Reads of another workspace's document behave as if it did not exist.
 * - Outside the contract: what happens to chunks (see {@link ChunkIndex}); retention's archiving
 *   (see {@link RetentionStore}).
 */
export interface VersionStore {
  createDocument(input: NewDocument): Promise<DocumentRecord>;
  /** Allocates `latestVersion + 1` atomically; `build` sees the current latest version. Rejects `not-found` for a missing or deleted document. */
  appendVersion(
    workspaceId: string,
    documentId: string,
    build: (latest: VersionRecord) => NewVersion,
  ): Promise<VersionRecord>;
  getDocument(workspaceId: string, documentId: string): Promise<DocumentRecord | null>;
  listDocuments(query: DocumentListQuery): Promise<{ documents: DocumentRecord[]; total: number }>;
  /**
   * The documents of the workspace, not deleted, created with one of the given (`source`,
   * `sourceItem`) pairs (see {@link NewDocument.sourceItem}), each with its latest version. Matches
   * are exact (case and whitespace count). A pair that matches nothing is simply absent; a pair
   * that matches several documents (created concurrently) answers all of them. Order: by source,
   * then item, then `createdAt` ascending and id. At most {@link SOURCE_ITEM_LOOKUP_MAX} pairs a
   * call; repeated pairs count once. Sees creations and new versions as `listDocuments` does:
   * this instance's at once, another instance's within the adapter's refresh bound.
   */
  lookupSourceItems(workspaceId: string, items: readonly SourceItemKey[]): Promise<DocumentRecord[]>;
  /**
   * A token that changes whenever a write may have changed what `listDocuments` answers (for any
   * workspace; it may also change when nothing did). A list page or total read under a token
   * stays right while the token is the same, so callers may cache them under it. Writes through
   * this instance change it before their promise resolves; writes of other processes change it
   * within the adapter's stated bound. Answers from memory or the local database file, without a
   * network request, so it may be asked on every request.
   */
  changeMark(): string;
  /** Newest first. Empty when the document does not exist in the workspace. */
  listVersions(workspaceId: string, documentId: string): Promise<VersionRecord[]>;
  /** Any workspace; also for soft-deleted documents (stages and history use it). */
  getVersion(documentId: string, version: number): Promise<VersionRecord | null>;
  /**
   * `getDocument(workspaceId, documentId)` and `getVersion(documentId, version)` in one call, so an
   * adapter may read both at once (a pipeline stage asks for both before it works on a version).
   */
  getDocumentAndVersion(
    workspaceId: string,
    documentId: string,
    version: number,
  ): Promise<{ document: DocumentRecord | null; version: VersionRecord | null }>;
  /**
   * Changes the given fields; null when the version does not exist. `getVersion`, `getDocument`
   * and `listVersions` see the change when the promise resolves, and so does this instance's
   * `listDocuments`; another instance's `listDocuments` sees a new status within the adapter's
   * refresh bound (OpenSearch: the documents index's refresh interval), as its `changeMark` does.
   * A patch of `progress` alone may reach `listDocuments` up to that bound later.
   */
  updateVersion(documentId: string, version: number, patch: VersionPatch): Promise<VersionRecord | null>;
  /**
   * Marks the version `completed` and serves it (see the contract above). `chunkCount` is the
   * number of its chunks, whose indexes are `0 … chunkCount-1` and ids `<document>:<version>:<index>`
   * (an adapter may address them by id rather than search for them). The `completed` status
   * reaches `listDocuments` as `updateVersion`'s statuses do.
   */
  completeVersion(documentId: string, version: number, result: CompletionResult): Promise<CompletionOutcome>;

  /**
   * Marks the document deleted at `at` (it stops being served then) and answers it; `writeKey`,
   * when given, is stored with the deletion in the same write (see `findWrite`). A document
   * deleted before is answered as it was deleted, with its own `deletedAt` (and keeps its own
   * key), once what an interrupted deletion left undone is finished: a caller tells a deletion it
   * made (`deletedAt` is `at`) from an earlier one. Null when the document does not exist in the
   * workspace. `notify`, when given, makes the deletion's notification, which is recorded pending
   * in the same write as the deletion (see {@link NotificationOutbox}); a document deleted before
   * records nothing and `notify` is not called.
   */
  softDelete(
    workspaceId: string,
    documentId: string,
    at: string,
    writeKey?: string,
    notify?: NotificationDraft,
  ): Promise<DocumentRecord | null>;
  /**
   * The change of the workspace stored with `writeKey`: the version `createDocument` or
   * `appendVersion` created with it (`NewVersion.writeKey`), or the deletion `softDelete` made
   * with it; null when there is none (or only in another workspace). The key is written in the
   * same write as the change itself, so the change is found once it happened, whether or not its
   * caller lived to see its promise resolve. What is found is whole: a version found is its
   * document's (`getDocument` shows it as the latest when nothing was appended after it; an append
   * cut off before the document counted it is finished first), and a version whose document was
   * never recorded (a `createDocument` cut off half-way) or was purged is not found. Of several
   * changes stored with one key, the latest.
   */
  findWrite(workspaceId: string, writeKey: string): Promise<RecordedWrite | null>;
  /**
   * Removes the document of the workspace with everything of it; false when there is none. `notify`,
   * when given, makes the purge's notification from the document as it was (deleted or not, with
   * its latest version), which is recorded pending together with the notification the document
   * held, if any, where the purge leaves them (see {@link NotificationOutbox}).
   */
  purge(workspaceId: string, documentId: string, notify?: NotificationDraft): Promise<boolean>;

  /** Documents not deleted, by their latest version's status, over every workspace (for metrics). */
  countDocumentsByStatus(): Promise<Record<VersionStatus, number>>;
}

/**
 * The chunks of each version, with their vectors, and keyword and vector search over them.
 *
 * Contract:
 * - `putChunks` upserts by chunk id, so replays are idempotent. Vectors must belong to the
 *   index model (`setIndexModel`); otherwise it rejects with `model-mismatch`.
 * - Search returns only chunks of versions served at the requested instant, of the given
 *   workspace, matching every filter; results are sorted by score, best first. Writes are
 *   visible to search once the write's promise resolves (adapters refresh as needed); chunks of a
 *   version not yet served may reach other instances' `listChunks`/`scanChunks`/`hasVectors` up
 *   to the engine's refresh interval late (they are searchable from `completeVersion` on).
 * - Outside the contract: full-text language analysis details, score scales across adapters.
 */
export interface ChunkIndex {
  putChunks(chunks: readonly ChunkInput[]): Promise<void>;
  /** Copies a version's chunks and vectors to another version of the same document (new ids). */
  copyChunks(documentId: string, fromVersion: number, toVersion: number): Promise<number>;
  /** Chunks with `index > afterIndex`, ascending, at most `limit`, plus the version's total. */
  listChunks(
    documentId: string,
    version: number,
    page: { afterIndex: number; limit: number },
  ): Promise<{ chunks: ChunkRecord[]; total: number }>;
  getChunk(chunkId: string): Promise<ChunkRecord | null>;
  deleteChunks(documentId: string, version: number): Promise<void>;
  /** Whether every chunk of the version has a vector of the index model. */
  hasVectors(documentId: string, version: number): Promise<boolean>;

  keywordSearch(query: StoreSearchQuery): Promise<SearchHit[]>;
  vectorSearch(query: StoreSearchQuery & { vector: Float32Array }): Promise<SearchHit[]>;
}

/**
 * The index model (which embedding model's vectors the chunk index holds) and the re-embedding
 * of every chunk when it changes.
 *
 * Contract:
 * - Setting the model it already is changes nothing; another model on an index that holds vectors
 *   needs `replace` (else `model-mismatch`), which drops every stored vector.
 * - `scanChunks` pages in ascending chunk-id order, so a scan that resumes after the last id it
 *   saw visits every chunk once.
 * - Outside the contract: how soon another instance sees a switch (within the adapter's bound).
 */
export interface IndexModelStore {
  getIndexModel(): Promise<IndexModel | null>;
  /** Sets the model on an empty index; with `replace`, drops every stored vector and switches. */
  setIndexModel(model: IndexModel, options?: { replace?: boolean }): Promise<void>;
  /** Chunks in id order after `afterId` (for re-embedding). */
  scanChunks(page: { afterId: string; limit: number }): Promise<ChunkRecord[]>;
  setChunkVectors(model: string, vectors: ReadonlyMap<string, Float32Array>): Promise<void>;
}

/**
 * Vectors by embedding model and content hash, so identical chunk text is embedded once.
 *
 * Contract: `putCachedVectors` upserts by (model, content hash), so replays are idempotent;
 * `getCachedVectors` returns only the hashes it holds for exactly that model. Outside the
 * contract: eviction (entries are kept).
 */
export interface VectorCache {
  getCachedVectors(model: string, contentHashes: readonly string[]): Promise<Map<string, Float32Array>>;
  putCachedVectors(model: string, vectors: ReadonlyMap<string, Float32Array>): Promise<void>;
}

/**
 * Retention: finding versions that stopped being served long enough ago and dropping their
 * chunks from the index (their records and files are kept).
 *
 * Contract: `listExpiredVersions` orders by `servedUntil`, then document id and version;
 * `archiveVersion` is idempotent. Outside the contract: deleting files from the object store.
 */
export interface RetentionStore {
  /** Versions of the workspace no longer served since before `cutoff` and not yet archived. */
  listExpiredVersions(workspaceId: string, cutoff: string): Promise<VersionRecord[]>;
  /** Drops the version's chunks from the index and marks it archived. Idempotent. */
  archiveVersion(documentId: string, version: number, at: string): Promise<void>;
  /** The latest `servedUntil` among archived versions of the workspace: `asOf` before it may miss results. */
  archivedHorizon(workspaceId: string): Promise<string | null>;
  /** Workspaces that hold documents (for retention runs). */
  listWorkspaces(): Promise<string[]>;
}

/** The ingestion backlog and how fast it drains, per workspace (workspaces with none are absent). */
export interface BacklogCounts {
  /** Versions accepted and not yet through ingestion: status `pending` or `processing`. */
  readonly unfinished: Readonly<Record<string, number>>;
  /** Versions whose `completedAt` is at or after the instant asked about. */
  readonly completed: Readonly<Record<string, number>>;
}

/**
 * Versions whose ingestion has not started or not finished: what a process killed between
 * recording a version and publishing its event leaves behind (see
 * `core/services/stranded-versions.service.ts`), and the backlog the API bounds (see
 * `core/services/ingestion-backlog.service.ts`).
 *
 * Contract:
 * - `listPendingVersions` answers versions with status `pending` created before `createdBefore`,
 *   of every workspace and document (deleted ones too), oldest first (then document id and
 *   version), at most `limit`.
 * - `countBacklog` counts, per workspace, the versions `pending` or `processing` (of every document,
 *   deleted ones too) and those completed at or after `completedSince`. It sees every write whose
 *   promise resolved before the call, of any instance. It is meant to be asked about once a second
 *   per process: an index answers it, not a scan of every version.
 */
export interface PendingVersions {
  listPendingVersions(createdBefore: string, limit: number): Promise<VersionRecord[]>;
  countBacklog(completedSince: string): Promise<BacklogCounts>;
}

/** The connection every role of one store shares: which engine, whether it answers, and closing it. */
export interface StoreConnection {
  readonly kind: string;
  /**
   * Rejects when the store cannot be used. Resolves `{degraded}` when it answers but a part of it
   * is not at full speed yet (the embedded keyword index while it is built or catches up, its vector
   * index while it is built in the background).
   */
  ping(): Promise<undefined | { readonly degraded: string }>;
  /** Releases the connection; calling it again changes nothing. */
  close(): Promise<void>;
}

/**
 * Documents, their versions, chunks and vectors, with keyword and vector search: every role
 * above, implemented by one adapter over one storage (the roles see each other's writes).
 * Each role states its own contract.
 */
export interface DocumentStore
  extends StoreConnection,
    VersionStore,
    ChunkIndex,
    IndexModelStore,
    VectorCache,
    RetentionStore,
    PendingVersions,
    NotificationOutbox,
    DocumentTransfer {
  /**
   * Writes a version's chunks and completes it: the outcome of `putChunks(chunks)` followed by
   * `completeVersion(documentId, version, result)`, with both contracts, in one call so that an
   * adapter may order the writes its own way (OpenSearch decides the serving first and writes the
   * chunks with their served interval, instead of writing them and then rewriting each). Retried
   * after a failure it finishes what the failed call left, as the two calls would.
   */
  completeVersionWithChunks(
    documentId: string,
    version: number,
    chunks: readonly ChunkInput[],
    result: CompletionResult,
  ): Promise<CompletionOutcome>;
}
