import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import { isStorageFull } from '../errors/storage-errors.ts';
import { createContentSniffer, detectType } from '../parsing/detect-type.ts';
import { ALLOWED_MIME_TYPES } from '../parsing/parsed-document.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { storageKeys } from '../util/storage-keys.ts';

/** A file streamed to object storage and checked, not yet attached to a document version. */
export interface StagedUpload {
  readonly documentId: string;
  readonly storageKey: string;
  readonly sizeBytes: number;
  readonly contentHash: string;
  readonly mimeType: string;
  readonly name: string;
}

export interface UploadStagingService {
  /**
   * Streams the file to object storage while counting, hashing (SHA-256) and sniffing its type.
   * Rejects with `payload-too-large` (detail: the actual byte count and the limit; the rest of
   * the stream is drained to count it), `empty-file`, or `unsupported-type` (detail: the type and
   * the allowed ones). A rejection leaves nothing stored. `documentId` is given for updates.
   */
  stage(input: {
    workspaceId: string;
    documentId?: string;
    stream: Readable;
    filename: string;
    declaredType?: string;
    /** Bytes the request announced (its Content-Length), checked against the free space first. */
    expectedBytes?: number;
  }): Promise<StagedUpload>;
  /** Removes a staged file that will not be used (a later validation failed). */
  discard(staged: StagedUpload): Promise<void>;
}

const tooLarge = (size: number, limit: number) =>
  new KbError('payload-too-large', `The file is ${size} bytes; the limit is ${limit} bytes.`);

/**
 * Upload staging: takes a file in as a stream, never buffered whole, and stores it where a new
 * document version can point at it. Promises that a file it refuses (too large, empty, of a type
 * the service does not take) leaves nothing in storage, and that a staged file is removed by
 * `discard` when the write it was staged for does not happen.
 */
export function createUploadStagingService(deps: {
  readonly objects: ObjectStore;
  readonly maxUploadBytes: number;
  /** Refuses (507) a write of this many bytes when storage is too full for it; none on a store that cannot tell. */
  readonly admit?: (bytes: number) => Promise<void>;
}): UploadStagingService {
  const { objects } = deps;
  return {
    async stage({ workspaceId, documentId = uuidv7(), stream, filename, declaredType, expectedBytes = 0 }) {
      if (deps.admit) {
        try {
          await deps.admit(Math.min(expectedBytes, deps.maxUploadBytes));
        } catch (error) {
          stream.resume();
          throw error;
        }
      }
      const key = storageKeys.upload(workspaceId, documentId, uuidv7());
      const hash = createHash('sha256');
      const sniffer = createContentSniffer();
      const limit = deps.maxUploadBytes;
      let size = 0;
      // Counts, hashes and sniffs on the way to storage. Past the limit it stops forwarding but
      // keeps reading, so the client gets the real size and the request is consumed cleanly.
      const inspect = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          size += chunk.length;
          if (size > limit) {
            callback();
            return;
          }
          hash.update(chunk);
          sniffer.update(chunk);
          callback(null, chunk);
        },
        flush(callback) {
          callback(size > limit ? tooLarge(size, limit) : null);
        },
      });
      // A store that fails (a full disk, say) destroys the stream with its error, so both sides
      // settle and the store's reason, not the stream's "aborted", is what the client hears of.
      const outcomes = await Promise.allSettled([
        objects.put(key, inspect).catch((error: unknown) => {
          inspect.destroy(error instanceof Error ? error : new Error(String(error)));
          throw error;
        }),
        pipeline(stream, inspect),
      ]);
      const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
      if (failures.length > 0) {
        await objects.delete(key).catch(() => {});
        if (size > limit) throw tooLarge(size, limit);
        throw failures.find(isStorageFull) ?? failures[0];
      }
      const discard = () => objects.delete(key).catch(() => {});
      if (size === 0) {
        await discard();
        throw new KbError('empty-file', 'The file is empty.');
      }
      const sniff = sniffer.finish();
      const hints = { declaredType, filename };
      const detection = detectType(sniff.head, hints, {
        utf8Valid: sniff.utf8Valid,
        hasNul: sniff.hasNul,
        jsonValid: sniff.jsonValid,
      });
      if ('rejected' in detection || 'needsJsonCheck' in detection) {
        await discard();
        const type = 'rejected' in detection ? detection.rejected : 'unknown';
        throw new KbError(
          'unsupported-type',
          `Unsupported file type ${type}. Allowed types: ${ALLOWED_MIME_TYPES.join(', ')}.`,
        );
      }
      return {
        documentId,
        storageKey: key,
        sizeBytes: size,
        contentHash: hash.digest('hex'),
        mimeType: detection.mimeType,
        name: filename || 'upload',
      };
    },

    async discard(staged) {
      await objects.delete(staged.storageKey);
    },
  };
}
