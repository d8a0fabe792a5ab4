import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { Client, S3Error } from 'minio';
import { engineUnavailable, KbError } from '../../errors/kb-error.ts';
import { countEngineRequest } from '../../util/engine-requests.ts';
import { isObjectKey, validateObjectKey, validateObjectKeyPrefix } from './object-key.ts';
import type { ObjectInfo, ObjectStore } from './object-store.port.ts';
import { budgetedParts, createPartBuffers, type Part } from './s3-parts.ts';

export interface S3ObjectStoreOptions {
  /** Endpoint URL, e.g. `http://127.0.0.1:9000` (MinIO) or `https://s3.eu-west-1.amazonaws.com`. */
  readonly endpoint: string;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  /** Bucket holding the objects; created if missing. */
  readonly bucket: string;
  /**
   * Bytes per multipart-upload part, and the largest body sent as a single PUT (default 8 MiB,
   * at least 5 MiB as S3 requires). A streamed `put` holds one part in memory at a time.
   */
  readonly partSize?: number;
  /**
   * Bytes of parts all streamed `put`s of this store may hold at once (default 40 MiB, at least
   * one part): more concurrent uploads than fit wait for a part's room, which slows their senders
   * instead of growing the process.
   */
  readonly partMemoryBytes?: number;
}

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const DEFAULT_PART_MEMORY = 40 * 1024 * 1024;
const MIN_PART_SIZE = 5 * 1024 * 1024;
/** Most keys one DeleteObjects request accepts. */
const DELETE_BATCH = 1000;
const LIST_PAGE = 1000;

/**
 * S3 error codes meaning "the service cannot serve this now, try again": throttling, server
 * trouble, timeouts, and MinIO starting up or short of the drives it needs (quorum).
 */
const RETRIABLE_S3_CODES = new Set([
  'SlowDown',
  'SlowDownRead',
  'SlowDownWrite',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'OperationAborted',
  'XMinioServerNotInitialized',
  'XMinioStorageFull',
  'XMinioReadQuorum',
  'XMinioWriteQuorum',
  'XMinioBackendDown',
  'XMinioServerBusy',
]);
/** The engine name every object-store `engine-unavailable` error carries. */
const OBJECT_STORAGE = 'object storage (S3)';
const MISSING_S3_CODES = new Set(['NoSuchKey', 'NotFound']);
const BUCKET_EXISTS_CODES = new Set(['BucketAlreadyOwnedByYou', 'BucketAlreadyExists']);

function s3Code(error: unknown): string | undefined {
  if (error instanceof S3Error) return error.code;
  const code = error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Turns a client or server failure into a KbError: unreachable or overloaded → retriable `engine-unavailable`. */
function storeError(error: unknown, what: string): KbError {
  if (error instanceof KbError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof S3Error) {
    const code = error.code ?? '';
    // An answer without a code is an error status without a body (a server still starting).
    if (RETRIABLE_S3_CODES.has(code) || code === '') {
      return engineUnavailable(OBJECT_STORAGE, `Object storage is busy (${what}): ${code} ${message}`.trim(), error);
    }
    return new KbError('internal-error', `Object storage rejected ${what}: ${code} ${message}`, {
      cause: error,
      retriable: false,
    });
  }
  // No S3 answer at all: refused or reset connections, timeouts, name resolution.
  return engineUnavailable(OBJECT_STORAGE, `Object storage is unreachable (${what}): ${message}`, error);
}

function notFound(key: string): KbError {
  return new KbError('not-found', `Object ${key} does not exist`);
}

function parseEndpoint(endpoint: string): { host: string; port: number; useSSL: boolean } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new KbError('config-invalid', `S3 endpoint is not a URL: ${endpoint}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new KbError('config-invalid', `S3 endpoint must be http(s): ${endpoint}`);
  }
  if (url.pathname !== '/' && url.pathname !== '') {
    throw new KbError('config-invalid', `S3 endpoint must not have a path: ${endpoint}`);
  }
  const useSSL = url.protocol === 'https:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (useSSL ? 443 : 80) : Number(url.port),
    useSSL,
  };
}

/**
 * An object store in an S3 bucket (MinIO, AWS S3 or any S3-compatible service), through the
 * `minio` client. Creates the bucket if missing before resolving.
 *
 * - `put` reads the body in parts of `partSize` bytes, one part at a time, within a memory budget
 *   shared by all puts (`partMemoryBytes`). A body that fits one part is sent as one
 *   PUT once it has been read whole; a larger one as a multipart upload of its own (never resuming
 *   another upload of the same key), completed only after the body ended. S3 shows an object only
 *   once its PUT or its multipart completion succeeds, so readers never see a partial object and
 *   a body that fails leaves none: a started multipart upload is aborted, its parts dropped, and
 *   the body's own error is rethrown. Concurrent puts of one key: the last to complete wins.
 * - `contentType` is stored as the object's `Content-Type` (default `application/octet-stream`).
 * - Integrity: every PUT and every part carries `Content-MD5`, which the service checks and the
 *   request signature covers; the payload itself is sent as `UNSIGNED-PAYLOAD` over HTTP as over
 *   HTTPS, so neither side hashes every byte with SHA-256 a second time for the signature (10–20 %
 *   more upload throughput against MinIO on two cores).
 * - `list` pages through ListObjectsV2, whose order (UTF-8 bytes) is the lexicographic order of
 *   keys, which are ASCII; objects whose names are not valid keys (written by other tools) are
 *   skipped, and `deletePrefix` leaves them alone too.
 * - `deletePrefix` lists first, then removes in batches of 1000 keys per DeleteObjects request.
 * - `url` is `s3://<bucket>/<key>`.
 * - Failures: an unreachable or overloaded service rejects with a retriable `engine-unavailable`;
 *   other S3 errors (access denied, …) with `internal-error`.
 */
export async function createS3ObjectStore(options: S3ObjectStoreOptions): Promise<ObjectStore> {
  const { bucket, region } = options;
  const partSize = options.partSize ?? DEFAULT_PART_SIZE;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART_SIZE) {
    throw new KbError('config-invalid', `S3 part size must be at least ${MIN_PART_SIZE} bytes`);
  }
  const partMemory = options.partMemoryBytes ?? Math.max(DEFAULT_PART_MEMORY, partSize);
  if (!Number.isSafeInteger(partMemory) || partMemory < partSize) {
    throw new KbError('config-invalid', `S3 part memory must hold at least one part (${partSize} bytes)`);
  }
  const partBuffers = createPartBuffers(partSize, Math.floor(partMemory / partSize));
  const { host, port, useSSL } = parseEndpoint(options.endpoint);
  const agent = useSSL ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  let client: Client;
  try {
    client = new Client({
      endPoint: host,
      port,
      useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      region,
      partSize,
      transportAgent: agent,
    });
    // Signed `Content-MD5` instead of a SHA-256 of the payload (see the integrity note above).
    client.enableSHA256 = false;
  } catch (error) {
    agent.destroy();
    throw new KbError(
      'config-invalid',
      `Invalid S3 settings: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }

  async function call<T>(request: string, what: string, operation: () => Promise<T>): Promise<T> {
    countEngineRequest('minio', request);
    try {
      return await operation();
    } catch (error) {
      throw storeError(error, what);
    }
  }

  async function ensureBucket(): Promise<void> {
    if (await call('HeadBucket', `checking bucket ${bucket}`, () => client.bucketExists(bucket))) return;
    try {
      await client.makeBucket(bucket, region);
    } catch (error) {
      // Another process created it between our check and our create.
      if (BUCKET_EXISTS_CODES.has(s3Code(error) ?? '')) return;
      throw storeError(error, `creating bucket ${bucket}`);
    }
  }

  try {
    await ensureBucket();
  } catch (error) {
    agent.destroy();
    throw error;
  }

  async function uploadMultipart(
    key: string,
    headers: Record<string, string>,
    first: Part,
    rest: AsyncIterator<Part>,
  ): Promise<number> {
    const uploadId = await call('CreateMultipartUpload', `starting upload of ${key}`, () =>
      client.initiateNewMultipartUpload(bucket, key, headers),
    );
    try {
      const etags: { part: number; etag: string }[] = [];
      let size = 0;
      const upload = async (body: Buffer) => {
        const part = etags.length + 1;
        const result = await call('UploadPart', `uploading part ${part} of ${key}`, () =>
          client.uploadPart(
            {
              bucketName: bucket,
              objectName: key,
              uploadID: uploadId,
              partNumber: part,
              headers: { 'Content-MD5': createHash('md5').update(body).digest('base64') },
            },
            body,
          ),
        );
        etags.push({ part, etag: result.etag });
        size += body.length;
      };
      // Each part goes back to the budget once sent, before the next is read.
      await upload(first.bytes);
      first.release();
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        await upload(next.value.bytes);
        next.value.release();
      }
      await call('CompleteMultipartUpload', `completing upload of ${key}`, () =>
        client.completeMultipartUpload(bucket, key, uploadId, etags),
      );
      return size;
    } catch (error) {
      countEngineRequest('minio', 'AbortMultipartUpload');
      await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw error;
    }
  }

  async function put(key: string, body: Readable | Buffer | string, contentType?: string): Promise<ObjectInfo> {
    validateObjectKey(key);
    const headers = { 'Content-Type': contentType ?? 'application/octet-stream' };
    const source: AsyncIterable<unknown> | Iterable<unknown> =
      typeof body === 'string' ? [Buffer.from(body)] : Buffer.isBuffer(body) ? [body] : body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      // Already in memory whole: nothing to bound.
      const whole = typeof body === 'string' ? Buffer.from(body) : body;
      if (whole.length <= partSize) {
        await call('PutObject', `writing ${key}`, () => client.putObject(bucket, key, whole, whole.length, headers));
        return { key, size: whole.length, modifiedAt: Date.now() };
      }
    }
    const parts = budgetedParts(source, partBuffers);
    try {
      // Errors of the body itself come out of `parts` unchanged; S3 errors come out of `call`.
      // A first part that is also the last is a single PUT; otherwise a multipart upload.
      const first = await parts.next();
      if (first.done || first.value.last) {
        const whole = first.done ? Buffer.alloc(0) : first.value.bytes;
        await call('PutObject', `writing ${key}`, () => client.putObject(bucket, key, whole, whole.length, headers));
        return { key, size: whole.length, modifiedAt: Date.now() };
      }
      return { key, size: await uploadMultipart(key, headers, first.value, parts), modifiedAt: Date.now() };
    } finally {
      // If S3 failed first, stops reading and destroys the body stream; a no-op once it has ended.
      await parts.return(undefined).catch(() => undefined);
    }
  }

  async function get(key: string): Promise<Readable> {
    validateObjectKey(key);
    countEngineRequest('minio', 'GetObject');
    try {
      return await client.getObject(bucket, key);
    } catch (error) {
      if (MISSING_S3_CODES.has(s3Code(error) ?? '')) throw notFound(key);
      throw storeError(error, `reading ${key}`);
    }
  }

  async function getBuffer(key: string): Promise<Buffer> {
    const stream = await get(key);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    } catch (error) {
      throw storeError(error, `reading ${key}`);
    }
    return Buffer.concat(chunks);
  }

  async function stat(key: string): Promise<ObjectInfo | null> {
    validateObjectKey(key);
    countEngineRequest('minio', 'HeadObject');
    try {
      const info = await client.statObject(bucket, key);
      return { key, size: info.size, modifiedAt: info.lastModified.getTime() };
    } catch (error) {
      if (MISSING_S3_CODES.has(s3Code(error) ?? '')) return null;
      throw storeError(error, `reading ${key}`);
    }
  }

  async function* list(prefix: string): AsyncGenerator<string> {
    validateObjectKeyPrefix(prefix);
    let token = '';
    for (;;) {
      const page = await call('ListObjectsV2', `listing ${prefix}`, () =>
        client.listObjectsV2Query(bucket, prefix, token, '', LIST_PAGE, ''),
      );
      for (const item of page.objects) {
        const name = item.name;
        if (name?.startsWith(prefix) && isObjectKey(name)) yield name;
      }
      if (!page.isTruncated || !page.nextContinuationToken) return;
      token = page.nextContinuationToken;
    }
  }

  async function removeBatch(keys: string[]): Promise<number> {
    const results = await call('DeleteObjects', `deleting ${keys.length} objects`, () =>
      client.removeObjects(bucket, keys),
    );
    let failed = 0;
    let firstFailure = '';
    for (const result of results) {
      // The client returns the DeleteObjects errors, either bare or under `Error`.
      const entry = (result && typeof result === 'object' && 'Error' in result ? result.Error : result) as
        | { Code?: string; Message?: string; Key?: string }
        | null
        | undefined;
      if (!entry?.Code) continue;
      failed += 1;
      firstFailure ||= `${entry.Key ?? '?'}: ${entry.Code} ${entry.Message ?? ''}`;
    }
    if (failed > 0) {
      throw new KbError('engine-unavailable', `Object storage did not delete ${failed} objects (${firstFailure})`, {
        engine: OBJECT_STORAGE,
        retriable: true,
      });
    }
    return keys.length;
  }

  async function deletePrefix(prefix: string): Promise<number> {
    validateObjectKeyPrefix(prefix);
    const keys: string[] = [];
    for await (const key of list(prefix)) keys.push(key);
    let removed = 0;
    for (let i = 0; i < keys.length; i += DELETE_BATCH) removed += await removeBatch(keys.slice(i, i + DELETE_BATCH));
    return removed;
  }

  return {
    kind: 's3',
    put: (key, body, putOptions) => put(key, body, putOptions?.contentType),
    get,
    getBuffer,
    stat,
    async delete(key) {
      validateObjectKey(key);
      await call('DeleteObject', `deleting ${key}`, () => client.removeObject(bucket, key));
    },
    deletePrefix,
    list,
    url(key) {
      validateObjectKey(key);
      return `s3://${bucket}/${key}`;
    },
    async sweepTemporary() {
      // A single PUT lands whole or not at all; incomplete multipart uploads are the lifecycle's.
      return 0;
    },
    async ping() {
      const exists = await call('HeadBucket', `checking bucket ${bucket}`, () => client.bucketExists(bucket));
      if (!exists) throw engineUnavailable(OBJECT_STORAGE, `Bucket ${bucket} does not exist`);
    },
    async close() {
      agent.destroy();
    },
  };
}
