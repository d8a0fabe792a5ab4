import { randomBytes } from 'node:crypto';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.ts';
import type { DocumentListItemView } from '../../core/model/response-views.model.ts';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';
import { page, syncAndWait } from '../support/source-client.ts';
import { expectProblem } from '../support/test-service.ts';

/**
 * An s3 source against the engines' MinIO (a random bucket, removed afterwards): credentials
 * stored encrypted and never shown, ETag change detection, changed / added / removed objects,
 * and the refusal of a private endpoint without KB_OUTBOUND_ALLOW_PRIVATE.
 */
const base = loadConfig();
if (!base.s3.endpoint) throw new Error('KB_S3_ENDPOINT is not set: load deploy/native/env first.');
const endpoint = base.s3.endpoint;
const url = new URL(endpoint);
const minio = new Client({
  endPoint: url.hostname,
  port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
  useSSL: url.protocol === 'https:',
  accessKey: base.s3.accessKey,
  secretKey: base.s3.secretKey,
  region: base.s3.region,
  pathStyle: true,
});
const bucket = `kbtest-sources-${randomBytes(4).toString('hex')}`;

let svc: TestApp;
let guarded: TestApp;
let sourceId: string;

const put = (key: string, body: string) => minio.putObject(bucket, key, Buffer.from(body));
const documents = async (): Promise<DocumentListItemView[]> =>
  (await svc.request('GET', '/api/v1/documents?source=bucket&limit=100')).body.documents;

beforeAll(async () => {
  await minio.makeBucket(bucket, base.s3.region);
  await put('kb/alpha.md', page('alpha'));
  await put('kb/beta.md', page('beta'));
  await put('kb/guides/gamma.txt', 'gamma is about tamarind\n');
  await put('kb/skip.png', '\x89PNG\r\n\x1a\n');
  await put('elsewhere/outside.md', page('outside'));
  svc = await buildTestApp({
    stages: 'none',
    env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true', KB_SOURCE_SECRET_KEY: randomBytes(32).toString('hex') },
  });
  guarded = await buildTestApp({ stages: 'none', env: { KB_SOURCE_SECRET_KEY: randomBytes(32).toString('hex') } });
});
afterAll(async () => {
  await svc?.close();
  await guarded?.close();
  const keys: string[] = [];
  for await (const object of minio.listObjectsV2(bucket, '', true)) if (object.name) keys.push(object.name);
  await minio.removeObjects(bucket, keys);
  await minio.removeBucket(bucket);
});

describe('s3 source on MinIO', () => {
  it('stores the credentials encrypted and never shows them', async () => {
    const res = await svc.request('POST', '/api/v1/sources', {
      json: {
        name: 'bucket',
        kind: 's3',
        endpoint,
        bucket,
        prefix: 'kb/',
        region: base.s3.region,
        exclude: ['*.png'],
        access_key: base.s3.accessKey,
        secret_key: base.s3.secretKey,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 's3', endpoint, bucket, prefix: 'kb/', credentials: 'stored' });
    expect(res.text).not.toContain(base.s3.secretKey);
    sourceId = res.body.id;
    const shown = await svc.request('GET', `/api/v1/sources/${sourceId}`);
    expect(shown.text).not.toContain(base.s3.secretKey);
    const stored = await svc.runtime.ports.sources.getSource(svc.workspaceId, sourceId);
    expect(stored?.location.secret).toMatch(/^v1:/);
    expect(JSON.stringify(stored)).not.toContain(base.s3.secretKey);
  });

  it('syncs the objects under the prefix, then finds them unchanged by ETag', async () => {
    const first = await syncAndWait(svc, sourceId);
    expect(first).toMatchObject({ status: 'completed', counts: { seen: 3, created: 3, failed: 0 } });
    expect((await documents()).map((d) => d.source_item).sort()).toEqual([
      'kb/alpha.md',
      'kb/beta.md',
      'kb/guides/gamma.txt',
    ]);
    const again = await syncAndWait(svc, sourceId);
    expect(again.counts).toMatchObject({ seen: 3, unchanged: 3, created: 0, updated: 0 });
  });

  it('makes a changed object a version, a new one a document, a removed one a deletion', async () => {
    await put('kb/alpha.md', page('alpha', 'the second edition'));
    await put('kb/delta.md', page('delta'));
    await minio.removeObject(bucket, 'kb/beta.md');
    const run = await syncAndWait(svc, sourceId, { query: '?allow_mass_delete=true' });
    expect(run.counts).toMatchObject({ updated: 1, created: 1, deleted: 1, unchanged: 1 });
    const docs = await documents();
    expect(docs.map((d) => d.source_item).sort()).toEqual(['kb/alpha.md', 'kb/delta.md', 'kb/guides/gamma.txt']);
    const alpha = docs.find((d) => d.source_item === 'kb/alpha.md');
    expect(alpha?.version).toBe(2);
  });

  it('fails the run with a clear code when the bucket is gone or the credentials are wrong', async () => {
    const wrong = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'wrong', kind: 's3', endpoint, bucket, access_key: 'nobody', secret_key: 'wrong-secret-key' },
    });
    const run = await syncAndWait(svc, wrong.body.id);
    expect(run.status).toBe('failed');
    expect(run.errors[0]).toMatchObject({ item: null, code: 'source-unreachable' });
  });

  it('refuses the private endpoint without KB_OUTBOUND_ALLOW_PRIVATE (422)', async () => {
    const res = await guarded.request('POST', '/api/v1/sources', {
      json: { name: 'bucket', kind: 's3', endpoint, bucket, access_key: 'a', secret_key: 'b' },
    });
    expect(expectProblem(res, 422, 'validation-error').errors?.[0]?.field).toBe('endpoint');
  });
});
