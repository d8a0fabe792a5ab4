import type { Readable } from 'node:stream';

/** What `stat` knows of a stored object. */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  /** When the object was last written, epoch milliseconds. */
  readonly modifiedAt: number;
}

/**
 * Object storage for uploaded files and derived artefacts (extracted text, chunk batches).
 *
 * Semantics every adapter keeps:
 * - Keys are `/`-separated relative paths of `[A-Za-z0-9._-]` segments; the service builds them
 *   from identifiers only, never from client file names. An adapter rejects a key with `..`,
 *   a leading `/`, or other characters with `bad-request`.
 * - `put` streams the body; it resolves once the object is durable and then `get` returns the
 *   whole object. A reader never sees a partly written object (write to a temporary name and
 *   rename, or a single S3 PUT/multipart upload). A rejected `put` leaves no object behind.
 * - `put` overwrites an existing object with the same key (last writer wins); writing the same
 *   bytes twice is therefore idempotent.
 * - `get`/`getBuffer` of a missing key reject with a `KbError` of code `not-found`.
 * - `delete` and `deletePrefix` are idempotent: deleting what is not there succeeds.
 * - `list` yields keys under a prefix in lexicographic order.
 * - Outside the contract: versioning, metadata beyond size, access accountStore, cross-key atomicity.
 */
export interface ObjectStore {
  /** `filesystem` or `s3`, for readiness reports. */
  readonly kind: string;
  put(key: string, body: Readable | Buffer | string, options?: { contentType?: string }): Promise<ObjectInfo>;
  get(key: string): Promise<Readable>;
  getBuffer(key: string): Promise<Buffer>;
  stat(key: string): Promise<ObjectInfo | null>;
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix`; returns how many were removed. */
  deletePrefix(prefix: string): Promise<number>;
  list(prefix: string): AsyncIterable<string>;
  /**
   * Where the object lives, for `storage_url`: `s3://bucket/key` on S3, `kb://key` (relative to the
   * store, never a path of the server's disk) on the filesystem.
   */
  url(key: string): string;
  /**
   * Removes what interrupted writes left behind that is older than `olderThanMs` (the temporary
   * files of a process killed mid-`put`); returns how many were removed. Idempotent. An S3 `put`
   * leaves nothing behind of its own (incomplete multipart uploads are the bucket lifecycle's).
   */
  sweepTemporary(olderThanMs: number): Promise<number>;
  /** Resolves if the storage answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
