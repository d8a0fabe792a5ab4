import type { Readable } from 'node:stream';
import type { ItemRecord } from '../ports/source-store/source-store.port.ts';

/** One item a source lists, with what it tells of the item without reading it. */
export interface SourceEntry {
  /** Path relative to the folder (`/`-separated), object key or URL. */
  readonly key: string;
  readonly sizeBytes: number | null;
  readonly mtimeMs: number | null;
  readonly etag: string | null;
  readonly lastModified: string | null;
}

/** An item's content, which may be opened more than once (hashed, then stored). */
export interface SourceContent {
  open(): Readable;
  /**
   * Releases what the read holds (a file descriptor); streams still going end with an error.
   * Called when the item is done, whatever its outcome, and when the process stops (so possibly
   * twice); never throws.
   */
  close?(): void;
  /** Validators the read returned (HTTP `ETag`/`Last-Modified`), when the listing did not give them. */
  readonly etag?: string | null;
  readonly lastModified?: string | null;
  /** The type the source declared (HTTP `Content-Type`), a hint for type detection. */
  readonly contentType?: string | null;
}

/** An item that failed on its own: listed in the run with this code, the rest goes on. */
export interface ListedFailure {
  readonly failure: { readonly item: string; readonly code: string; readonly detail: string };
}

/**
 * What the sync engine needs of one kind of source. `list` throws a `KbError` with code
 * `source-unreachable` (or `path-refused`, `outbound-refused`) when the source cannot be read at
 * all, which fails the run; an item it cannot list is yielded as a {@link ListedFailure}. `read`
 * answers `not-modified` when the source says so from the known validators (HTTP 304), else the
 * content; it throws a `KbError` for that item only.
 */
export interface SourceReader {
  list(): AsyncIterable<SourceEntry | ListedFailure>;
  read(entry: SourceEntry, known: ItemRecord | undefined): Promise<'not-modified' | SourceContent>;
}
