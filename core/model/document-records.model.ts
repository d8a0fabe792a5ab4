/** Processing status of one document version (the document's `status` is its latest version's). */
export type VersionStatus = 'pending' | 'processing' | 'completed' | 'failed';
export const VERSION_STATUSES: readonly VersionStatus[] = ['pending', 'processing', 'completed', 'failed'];

/** Why a version failed: `{code, message, stage, attempts, at}` as the API shows it. */
export interface IngestError {
  readonly code: string;
  readonly message: string;
  readonly stage: string;
  readonly attempts: number;
  readonly at: string;
}

/** How far an unfinished version's ingestion is: the stage at work and the chunks it has done. */
export interface IngestProgress {
  readonly stage: string;
  readonly chunksDone: number;
  /** 0 until the chunk stage has cut the text. */
  readonly chunksTotal: number;
}

export type Metadata = Record<string, unknown>;

/** Most (source, item) pairs one lookup of documents by source item may ask. */
export const SOURCE_ITEM_LOOKUP_MAX = 1000;

export interface VersionRecord {
  readonly documentId: string;
  readonly workspaceId: string;
  readonly version: number;
  readonly status: VersionStatus;
  readonly name: string;
  readonly mimeType: string;
  readonly sizeBytes: number;
  /** SHA-256 of the file, lowercase hex. */
  readonly contentHash: string;
  /** Object-store key of the file (versions with the same content may share it). */
  readonly storageKey: string;
  readonly metadata: Metadata;
  readonly changeReason: string | null;
  readonly restoredFrom: number | null;
  /** Id of the API key that created the version. */
  readonly createdBy: string;
  readonly createdAt: string;
  readonly completedAt: string | null;
  /** When this version started being served by search (its ingestion completed), or null. */
  readonly servedFrom: string | null;
  /** When it stopped being served (the next version completed, or the document was deleted). */
  readonly servedUntil: string | null;
  readonly chunkCount: number;
  readonly tokens: number;
  readonly embeddingModel: string | null;
  readonly error: IngestError | null;
  /** Last progress the pipeline recorded (kept after completion; shown while processing). */
  readonly progress: IngestProgress | null;
  /** Set once retention dropped the version's chunks from the index (its file is kept). */
  readonly archivedAt: string | null;
}

export interface DocumentRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly source: string;
  /**
   * The item within `source` the document was recorded for at creation (a path relative to the
   * loaded folder, an object key, a URL), by which `lookupSourceItems` finds it; absent when none was.
   */
  readonly sourceItem?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly deletedAt: string | null;
  /** The highest version number allocated. */
  readonly latestVersion: number;
  /** The version search serves now, or null (none completed yet, or deleted). */
  readonly servedVersion: number | null;
  /** The record of `latestVersion`. */
  readonly latest: VersionRecord;
}

export interface ChunkRecord {
  /** `<document_id>:<version>:<index>`. */
  readonly id: string;
  readonly documentId: string;
  readonly workspaceId: string;
  readonly version: number;
  readonly index: number;
  readonly content: string;
  /** SHA-256 of `content`, lowercase hex: the vector-cache key and the diff's alignment key. */
  readonly contentHash: string;
  readonly tokens: number;
  readonly startOffset: number;
  readonly endOffset: number;
  readonly page: number | null;
  readonly metadata: Metadata;
}

export interface IndexModel {
  readonly model: string;
  readonly dimensions: number;
}
