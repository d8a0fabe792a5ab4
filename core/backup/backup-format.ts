import { createHash } from 'node:crypto';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { KbError } from '../errors/kb-error.ts';
import type { IndexModel } from '../model/document-records.model.ts';

/**
 * The backup format, the same for both runtimes. A backup location (a folder or an S3 prefix) holds:
 *
 * - `backup.json`: which backup is the latest, with the SHA-256 of its manifest;
 * - `manifests/<id>.json`: one manifest per backup taken there (every file it needs, with its
 *   SHA-256, size and record count);
 * - `records/<id>/<kind>.ndjson.gz`: the records of one backup, one JSON object a line;
 * - `chunks/<sha256>.ndjson.gz`: the chunks of one version with their vectors (base64 float32),
 *   named by the hash of their bytes and shared by every backup that holds them unchanged;
 * - `files/<sha256>`: stored objects (uploaded files, parsed text) named by the hash of their bytes,
 *   shared the same way.
 *
 * A later backup to the same location copies only chunks and files it does not hold yet.
 */
export const BACKUP_FORMAT = 'kb-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const POINTER_KEY = 'backup.json';

export const RECORD_KINDS = ['documents', 'keys', 'users', 'audit', 'sources', 'webhooks'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** A file of the backup: where, how large, its SHA-256, and how many records it holds (when it holds records). */
export interface FileEntry {
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
}

export interface RecordFileEntry extends FileEntry {
  readonly kind: RecordKind;
  readonly count: number;
}

/** The chunks of one version; `identity` says which state of the version they are (see `chunkIdentity`). */
export interface ChunkFileEntry extends FileEntry {
  readonly documentId: string;
  readonly version: number;
  readonly identity: string;
  readonly count: number;
  /** How many of them have a vector. */
  readonly vectors: number;
}

/** A stored object: its key in the object store and the backup file holding its bytes. */
export interface ObjectEntry extends FileEntry {
  readonly key: string;
}

export interface BackupCounts {
  documents: number;
  versions: number;
  chunks: number;
  vectors: number;
  objects: number;
  keys: number;
  users: number;
  audit: number;
  sources: number;
  sourceItems: number;
  webhooks: number;
}

export interface BackupManifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly formatVersion: number;
  readonly id: string;
  /** The instant the backup shows. */
  readonly at: string;
  /** Whether the document store's view was one transaction (embedded) or a cut at `at` (distributed). */
  readonly exact: boolean;
  readonly runtime: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly previous: string | null;
  readonly indexModel: IndexModel | null;
  readonly counts: BackupCounts;
  /** What this backup wrote (the rest it shares with earlier backups at the same location). */
  readonly written: { readonly files: number; readonly bytes: number };
  readonly records: readonly RecordFileEntry[];
  readonly chunks: readonly ChunkFileEntry[];
  readonly objects: readonly ObjectEntry[];
  /**
   * Files of versions that were gone from the object store when the backup copied them (their
   * document purged between the snapshot and the copy): restored versions without their file.
   */
  readonly missingObjects: readonly string[];
}

export interface BackupPointer {
  readonly format: typeof BACKUP_FORMAT;
  readonly latest: string;
  readonly manifestSha256: string;
}

export const manifestKey = (id: string) => `manifests/${id}.json`;
export const recordsKey = (id: string, kind: RecordKind) => `records/${id}/${kind}.ndjson.gz`;
export const chunksKey = (sha: string) => `chunks/${sha}.ndjson.gz`;
export const fileKey = (sha: string) => `files/${sha}`;

export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * One JSON value a line, gzipped. `huffman` codes the bytes without looking for repeated strings
 * (zlib's Z_HUFFMAN_ONLY): for chunk files, mostly base64 vectors with little to find, it takes about
 * a fifth of the CPU of level 1 for files some 15 % larger; any gzip reader reads both.
 */
export function encodeNdjson(values: readonly unknown[], coding: 'deflate' | 'huffman' = 'deflate'): Buffer {
  const text = Buffer.from(values.map((value) => `${JSON.stringify(value)}\n`).join(''), 'utf8');
  return gzipSync(text, coding === 'huffman' ? { level: 1, strategy: constants.Z_HUFFMAN_ONLY } : { level: 1 });
}

export function decodeNdjson<T>(bytes: Buffer, what: string): T[] {
  let text: string;
  try {
    text = gunzipSync(bytes).toString('utf8');
  } catch (error) {
    throw backupInvalid(`${what} is not gzip data`, error);
  }
  const values: T[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      values.push(JSON.parse(line) as T);
    } catch (error) {
      throw backupInvalid(`${what} holds a line that is not JSON`, error);
    }
  }
  return values;
}

export function backupInvalid(message: string, cause?: unknown): KbError {
  return new KbError('backup-invalid', message, { retriable: false, ...(cause === undefined ? {} : { cause }) });
}

export function vectorToBase64(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

export function base64ToVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
