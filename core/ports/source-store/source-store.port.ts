/**
 * The source store: sources of synchronisation (folders, S3 buckets, web pages), their runs, and
 * what the last run saw of each item (for change detection without re-reading everything).
 */

export type SourceKind = 'folder' | 's3' | 'web';
export const SOURCE_KINDS: readonly SourceKind[] = ['folder', 's3', 'web'];

export type RunStatus = 'running' | 'completed' | 'failed';

/** Where a source's items come from; which members are set depends on the kind. */
export interface SourceLocation {
  /** `folder`: the directory, absolute and canonical (symlinks resolved). */
  readonly path?: string;
  /** `web`: the pages to fetch. */
  readonly urls?: readonly string[];
  /** `web`: a sitemap whose `<loc>` entries are the pages. */
  readonly sitemap?: string;
  /** `s3`: the store's endpoint, bucket and key prefix. */
  readonly endpoint?: string;
  readonly bucket?: string;
  readonly prefix?: string;
  readonly region?: string;
  /** `s3`: the credentials, sealed (encrypted) by the service; never shown back. */
  readonly secret?: string;
}

export interface SourceRecord {
  readonly id: string;
  readonly workspaceId: string;
  /** Unique in the workspace; the `source` of the documents it synchronises. */
  readonly name: string;
  readonly kind: SourceKind;
  readonly location: SourceLocation;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly metadata: Record<string, unknown>;
  /** An ISO 8601 duration between scheduled runs, or null (manual only). */
  readonly schedule: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface RunCounts {
  readonly seen: number;
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly deleted: number;
  readonly failed: number;
  readonly deletionsHeld: number;
}

export const ZERO_COUNTS: RunCounts = {
  seen: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
  failed: 0,
  deletionsHeld: 0,
};

/** One failing item of a run (or, with `item` null, why the whole run failed). */
export interface RunError {
  readonly item: string | null;
  readonly code: string;
  readonly detail: string;
}

export interface RunRecord {
  readonly id: string;
  readonly sourceId: string;
  readonly workspaceId: string;
  readonly status: RunStatus;
  /** This run may delete more than the configured fraction of the source's documents. */
  readonly allowMassDelete: boolean;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** Last sign of life of the process running it (a stale one means that process is gone). */
  readonly heartbeatAt: string;
  readonly counts: RunCounts;
  readonly errors: readonly RunError[];
}

/** What a run last saw of one item of a source, and the document that holds it. */
export interface ItemRecord {
  readonly sourceId: string;
  /** Path relative to the folder, object key or URL. */
  readonly itemKey: string;
  readonly documentId: string;
  readonly sizeBytes: number | null;
  /** Folder: modification time in ms; null when unknown. */
  readonly mtimeMs: number | null;
  /** S3 ETag or the HTTP `ETag` validator. */
  readonly etag: string | null;
  /** HTTP `Last-Modified`. */
  readonly lastModified: string | null;
  /** SHA-256 of the content the document's latest synced version holds; null until it has one. */
  readonly sha256: string | null;
}

/** The outcome of asking to start a run: it started, or another one of the source is running. */
export type RunClaim = { readonly started: RunRecord } | { readonly running: RunRecord };

export type SourcePatch = Partial<
  Pick<SourceRecord, 'name' | 'location' | 'include' | 'exclude' | 'metadata' | 'schedule' | 'updatedAt'>
>;

/**
 * Sources, runs and items of one deployment (all workspaces).
 *
 * - Names: `createSource` and `updateSource` reject a name another source of the workspace has
 *   with `KbError('conflict')`; nothing is written then.
 * - One run per source: `claimRun` is atomic across every process sharing the store. It starts
 *   `run` only when no run of the source is `running`, or when the running one's heartbeat is
 *   older than `staleBefore` (its process is gone: that run is marked `failed` with an error of
 *   code `sync-interrupted` and the new one starts). Otherwise it starts nothing and returns the
 *   running one.
 * - `updateRun` and `finishRun` change only a `running` run and return false for any other (a
 *   run another process took over, or one already finished): the caller stops working on it.
 * - Runs are listed newest first. Items are listed in key order; `putItem` inserts or replaces
 *   by (source, key), `deleteItem` of a missing item does nothing.
 * - `deleteSource` removes the source, its runs and its items (not its documents).
 * - Reads of another workspace's source answer null or empty, never another workspace's data.
 *
 * Outside the contract: how records are laid out, when a removed source's space is reclaimed,
 * and ordering between processes beyond the atomic claim.
 */
export interface SourceStore {
  readonly kind: string;
  createSource(source: SourceRecord): Promise<SourceRecord>;
  getSource(workspaceId: string, id: string): Promise<SourceRecord | null>;
  /** Sources of a workspace by name; of every workspace when `workspaceId` is null (the scheduler). */
  listSources(workspaceId: string | null): Promise<SourceRecord[]>;
  updateSource(workspaceId: string, id: string, patch: SourcePatch): Promise<SourceRecord | null>;
  deleteSource(workspaceId: string, id: string): Promise<boolean>;

  claimRun(run: RunRecord, staleBefore: string): Promise<RunClaim>;
  updateRun(runId: string, progress: Pick<RunRecord, 'counts' | 'errors' | 'heartbeatAt'>): Promise<boolean>;
  finishRun(
    runId: string,
    end: Pick<RunRecord, 'counts' | 'errors' | 'finishedAt'> & { readonly status: 'completed' | 'failed' },
  ): Promise<boolean>;
  getRun(sourceId: string, runId: string): Promise<RunRecord | null>;
  listRuns(sourceId: string, limit: number): Promise<RunRecord[]>;
  /** Runs still `running` of every source (for resuming interrupted ones). */
  listRunningRuns(): Promise<RunRecord[]>;

  listItems(sourceId: string): Promise<ItemRecord[]>;
  putItem(item: ItemRecord): Promise<void>;
  deleteItem(sourceId: string, itemKey: string): Promise<void>;
  /** The item key of each of these documents that a source synchronises (others are absent). */
  itemKeysOf(documentIds: readonly string[]): Promise<Map<string, string>>;

  close(): Promise<void>;
}
