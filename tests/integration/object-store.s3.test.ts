import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.ts';
import type { ObjectStore } from '../../core/ports/object-store/object-store.port.ts';
import { createS3ObjectStore, type S3ObjectStoreOptions } from '../../core/ports/object-store/s3.adapter.ts';
import { closedPort } from '../../support/ports.ts';
import { describeObjectStoreContract } from '../contract/object-store.contract.ts';

const MiB = 1024 * 1024;

/** S3 settings from the environment (`eval "$(deploy/native/env)"`), with a fresh bucket name. */
function s3Options(): S3ObjectStoreOptions {
  const { s3 } = loadConfig();
  if (s3.endpoint === null) {
    throw new Error(
      'KB_S3_ENDPOINT is not set: start the engines with `deploy/native/up minio` and run ' +
        '`eval "$(deploy/native/env)"` before the integration tests',
    );
  }
  return {
    endpoint: s3.endpoint,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    region: s3.region,
    bucket: `kbtest-${randomUUID().replaceAll('-', '').slice(0, 16)}`,
  };
}

function adminClient(options: S3ObjectStoreOptions): Client {
  const url = new URL(options.endpoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    useSSL: url.protocol === 'https:',
    accessKey: options.accessKey,
    secretKey: options.secretKey,
    region: options.region,
  });
}

/** Removes the bucket with everything in it, unfinished uploads included. */
async function removeBucket(options: S3ObjectStoreOptions): Promise<void> {
  const admin = adminClient(options);
  if (!(await admin.bucketExists(options.bucket))) return;
  const names: string[] = [];
  for await (const item of admin.listObjectsV2(options.bucket, '', true)) if (item.name) names.push(item.name);
  if (names.length > 0) await admin.removeObjects(options.bucket, names);
  for await (const upload of admin.listIncompleteUploads(options.bucket, '', true)) {
    await admin.abortMultipartUpload(options.bucket, upload.key, upload.uploadId);
  }
  await admin.removeBucket(options.bucket);
}

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

/** Unfinished multipart uploads under `prefix` (MinIO lists them only for an exact key or the whole bucket). */
async function incompleteUploads(admin: Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const upload of admin.listIncompleteUploads(bucket, '', true)) {
    if (upload.key.startsWith(prefix)) keys.push(upload.key);
  }
  return keys;
}

/** A body that yields `bytes` in 256 KiB chunks, then fails as a dropped client connection does. */
function failingAfter(bytes: Buffer): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0; offset < bytes.length; offset += 256 * 1024)
        yield bytes.subarray(offset, offset + 256 * 1024);
      throw new Error('client went away');
    })(),
  );
}

function chunked(bytes: Buffer, size = 100_000): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
    })(),
  );
}

describeObjectStoreContract('s3', async () => {
  const options = s3Options();
  return { store: await createS3ObjectStore(options), cleanup: () => removeBucket(options) };
});

describe('s3 object store', () => {
  // The smallest part S3 allows keeps the multipart tests' bodies small.
  const options = { ...s3Options(), partSize: 5 * MiB };
  const admin = adminClient(options);
  let store: ObjectStore;

  beforeAll(async () => {
    store = await createS3ObjectStore(options);
  });

  afterAll(async () => {
    await store?.close();
    await removeBucket(options);
  });

  it('creates its bucket if missing, and a second store on the same bucket starts fine', async () => {
    expect(await admin.bucketExists(options.bucket)).toBe(true);
    const second = await createS3ObjectStore(options);
    await second.put('shared/one.txt', 'one');
    expect((await store.getBuffer('shared/one.txt')).toString()).toBe('one');
    await second.close();
  });

  it('streams a body larger than one part as a multipart upload and stores its content type', async () => {
    const body = randomBytes(11 * MiB + 123);
    expect(await store.put('multi/big.bin', chunked(body), { contentType: 'application/pdf' })).toMatchObject({
      key: 'multi/big.bin',
      size: body.length,
    });
    expect((await store.getBuffer('multi/big.bin')).equals(body)).toBe(true);
    expect(await store.stat('multi/big.bin')).toMatchObject({ key: 'multi/big.bin', size: body.length });
    const info = await admin.statObject(options.bucket, 'multi/big.bin');
    expect(info.metaData['content-type']).toBe('application/pdf');
    // Part boundaries fall where the body says: a body of exactly two parts.
    const exact = randomBytes(10 * MiB);
    await store.put('multi/exact.bin', chunked(exact, 3 * MiB));
    expect((await store.getBuffer('multi/exact.bin')).equals(exact)).toBe(true);
    expect(await incompleteUploads(admin, options.bucket, 'multi/')).toEqual([]);
  });

  it('aborts the multipart upload when the body fails after a part was sent, leaving nothing behind', async () => {
    await expect(store.put('aborted/new.bin', failingAfter(randomBytes(12 * MiB)))).rejects.toThrow('client went away');
    expect(await store.stat('aborted/new.bin')).toBeNull();
    expect(await incompleteUploads(admin, options.bucket, 'aborted/')).toEqual([]);

    await store.put('aborted/kept.bin', 'previous content');
    await expect(store.put('aborted/kept.bin', failingAfter(randomBytes(7 * MiB)))).rejects.toThrow('client went away');
    expect((await store.getBuffer('aborted/kept.bin')).toString()).toBe('previous content');
    expect(await incompleteUploads(admin, options.bucket, 'aborted/')).toEqual([]);
    expect(await collect(store.list('aborted/'))).toEqual(['aborted/kept.bin']);
  });

  it('keeps concurrent streamed multipart writers to one key whole', async () => {
    const bodies = [randomBytes(6 * MiB), randomBytes(6 * MiB), randomBytes(6 * MiB)];
    await Promise.all(bodies.map((body) => store.put('race/multi.bin', chunked(body))));
    const stored = await store.getBuffer('race/multi.bin');
    expect(bodies.some((body) => body.equals(stored))).toBe(true);
  });

  it('lists and deletes more objects than one page or one delete request holds', async () => {
    const keys = Array.from({ length: 1005 }, (_, i) => `many/${String(i).padStart(4, '0')}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(keys.slice(i, i + 50).map((key) => store.put(key, key)));
    }
    await store.put('many-other/keep', 'keep');
    expect(await collect(store.list('many/'))).toEqual(keys);
    expect(await store.deletePrefix('many/')).toBe(keys.length);
    expect(await collect(store.list('many/'))).toEqual([]);
    expect((await store.getBuffer('many-other/keep')).toString()).toBe('keep');
  });

  it('skips objects whose names are not valid keys when listing and deleting by prefix', async () => {
    await admin.putObject(options.bucket, 'foreign/has space.txt', Buffer.from('x'));
    await store.put('foreign/ours.txt', 'ours');
    expect(await collect(store.list('foreign/'))).toEqual(['foreign/ours.txt']);
    expect(await store.deletePrefix('foreign/')).toBe(1);
    expect((await admin.statObject(options.bucket, 'foreign/has space.txt')).size).toBe(1);
  });

  it('names objects s3://bucket/key', () => {
    expect(store.url('ws/doc/1/original.pdf')).toBe(`s3://${options.bucket}/ws/doc/1/original.pdf`);
  });

  it('rejects with a retriable engine-unavailable when the service does not answer', async () => {
    const unreachable = { ...options, endpoint: `http://127.0.0.1:${await closedPort()}` };
    await expect(createS3ObjectStore(unreachable)).rejects.toMatchObject({
      code: 'engine-unavailable',
      retriable: true,
    });
  });
});
