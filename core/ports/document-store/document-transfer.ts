import type { ChunkRecord, DocumentRecord, IndexModel, VersionRecord } from '../../model/document-records.model.ts';
import type { ChunkInput } from './document-store.port.ts';

/** A document as stored, without its latest version's record (a snapshot lists the versions beside it). */
export type StoredDocument = Omit<DocumentRecord, 'latest'>;

/** A chunk as stored: its record, its vector (or null) and the model of that vector (or null). */
export interface StoredChunk extends ChunkRecord {
  readonly vector: Float32Array | null;
  readonly model: string | null;
}

/**
 * A read view of the whole store for a backup (`core/backup/`).
 *
 * Contract:
 * - With `exact` true (SQLite: one read transaction on a connection of its own) every read answers
 *   the store as it was at one instant, whatever is written meanwhile; `at` is taken when that
 *   view was fixed.
 * - With `exact` false (OpenSearch: no transactions across requests) reads answer the store as it
 *   is when each is made; the caller cuts the records at `at` (taken before the first read): what
 *   was created, completed, deleted or archived after it is left out or shown as before it.
 * - `documents` pages every document of every workspace, deleted ones too, in ascending id order
 *   after `afterId`, each with every version (ascending). `chunks` answers a version's chunks in
 *   index order with their vectors.
 * - `close` releases the view; calling it again changes nothing.
 */
export interface DocumentSnapshot {
  readonly at: string;
  readonly exact: boolean;
  readonly indexModel: IndexModel | null;
  documents(
    afterId: string,
    limit: number,
  ): Promise<{ readonly document: StoredDocument; readonly versions: readonly VersionRecord[] }[]>;
  chunks(documentId: string, version: number): Promise<StoredChunk[]>;
  close(): Promise<void>;
}

/**
 * Moving the store's records out and in whole, for backup and restore.
 *
 * Contract:
 * - `openSnapshot` answers a {@link DocumentSnapshot}; the store keeps serving and taking writes.
 * - `importDocument` writes a document and its versions exactly as given (ids, numbers, statuses,
 *   timestamps, served intervals, archive marks), replacing a document of the same id with its
 *   versions and chunks. Its chunks are written afterwards with `importChunks`, which writes them
 *   as `putChunks` does (deriving whatever the adapter copies from the version onto its chunks)
 *   with their vectors as given. Nothing is embedded.
 * - Visibility: what `importDocument` and `importChunks` wrote is read back by id at once, but a
 *   search may not see it until `finishImport` (OpenSearch: one refresh at the end instead of one
 *   per write, each of which would cut a small segment and build its vector graph). A restore
 *   calls `finishImport` once after its last import; calling it again is harmless.
 */
export interface DocumentTransfer {
  openSnapshot(): Promise<DocumentSnapshot>;
  importDocument(document: StoredDocument, versions: readonly VersionRecord[]): Promise<void>;
  importChunks(chunks: readonly ChunkInput[]): Promise<void>;
  finishImport(): Promise<void>;
}
