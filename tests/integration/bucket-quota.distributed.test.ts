/**
 * A bucket that runs out of quota on the real MinIO: an upload it refuses is answered 507
 * `insufficient-storage` (never 500) and leaves no object behind; smaller uploads, reads and search
 * keep working; once the quota is lifted the same upload goes through.
 */
import aws4 from 'aws4';
import * as Minio from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, createKey, startChild, stopChild, waitForDocument } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

let setup: DistributedEnv;
let api: ChildService;
let key: string;
let bucket: string;
let minio: Minio.Client;

/** MinIO's admin API: a hard quota of `bytes` on the bucket (0 lifts it). */
async function setQuota(bytes: number): Promise<void> {
  const endpoint = new URL(setup.env.KB_S3_ENDPOINT as string);
  const body = JSON.stringify({ quota: bytes, size: bytes, quotatype: 'hard' });
  const signed = aws4.sign(
    {
      host: endpoint.host,
      path: `/minio/admin/v3/set-bucket-quota?bucket=${bucket}`,
      method: 'PUT',
      body,
      service: 's3',
      region: setup.env.KB_S3_REGION as string,
      headers: { 'content-type': 'application/json' },
    },
    { accessKeyId: setup.env.KB_S3_ACCESS_KEY as string, secretAccessKey: setup.env.KB_S3_SECRET_KEY as string },
  );
  const response = await fetch(`${endpoint.origin}${signed.path}`, {
    method: 'PUT',
    headers: signed.headers as Record<string, string>,
    body,
  });
  expect(response.status, await response.text()).toBe(200);
}

async function objectNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const item of minio.listObjectsV2(bucket, '', true)) if (item.name) names.push(item.name);
  return names;
}

async function upload(name: string, size: number) {
  const line = `${name} records the tide at the harbour mouth. `;
  const form = new FormData();
  form.append('file', new Blob([line.repeat(Math.ceil(size / line.length)).slice(0, size)]), name);
  const response = await fetch(`${api.url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.json()) as { document_id: string } & Record<string, unknown>,
  };
}

beforeAll(async () => {
  setup = distributedEnv();
  bucket = setup.env.KB_S3_BUCKET as string;
  const endpoint = new URL(setup.env.KB_S3_ENDPOINT as string);
  minio = new Minio.Client({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port),
    useSSL: endpoint.protocol === 'https:',
    accessKey: setup.env.KB_S3_ACCESS_KEY as string,
    secretKey: setup.env.KB_S3_SECRET_KEY as string,
  });
  key = (await createKey(setup.env, { workspace: 'quota', name: 'quota', permissions: 'read,search,write' })).key;
  api = await startChild(['serve', '--stages', 'all'], setup.env, { timeoutMs: 120_000 });
}, 180_000);

afterAll(async () => {
  if (api) await stopChild(api);
  if (bucket) await setQuota(0).catch(() => undefined);
  await setup?.cleanup();
});

describe('a bucket over its quota', { timeout: 240_000 }, () => {
  it('refuses the upload with 507 and no leftover object, keeps the service working, and heals', async () => {
    const small = await upload('before.txt', 2_000);
    expect(small.status).toBe(201);
    await waitForDocument(api.url, key, small.body.document_id);
    const before = await objectNames();

    await setQuota(100 * 1024);
    const refused = await upload('large.txt', 300 * 1024);
    expect(refused.status).toBe(507);
    expect(refused.type).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ status: 507, type: expect.stringMatching(/insufficient-storage$/) });
    // Nothing of the refused upload stays in the bucket.
    expect(await objectNames()).toEqual(before);

    // Reads and search keep working, and a small upload still fits under the quota.
    const read = await fetch(`${api.url}/api/v1/documents/${small.body.document_id}`, {
      headers: { 'X-API-Key': key },
    });
    expect(read.status).toBe(200);
    const search = await fetch(`${api.url}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'tide at the harbour', mode: 'keyword' }),
    });
    expect(search.status).toBe(200);
    const fits = await upload('fits.txt', 2_000);
    expect(fits.status).toBe(201);
    await waitForDocument(api.url, key, fits.body.document_id);

    await setQuota(0);
    const healed = await upload('large.txt', 300 * 1024);
    expect(healed.status).toBe(201);
    await waitForDocument(api.url, key, healed.body.document_id);
  });
});
