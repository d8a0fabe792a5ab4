import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../core/config/config.ts';
import { createEmbeddingProvider } from '../../core/runtime/create-embedding-provider.ts';
import { kb, kbResult, tempDir } from '../../support/child-service.ts';
import { type BuiltKnowledgeBase, buildKnowledgeBase, observe } from '../support/backup-scenario.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { type EmbeddingProbe, probeEmbeddings } from '../support/embedding-probe.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Moving a knowledge base from one machine onto the engines: a backup of the embedded runtime,
 * restored with `KB_RUNTIME=distributed kb restore` into fresh engine names (random topic and
 * index prefixes, database and bucket), answers the same with the same keys, embedding nothing.
 */

/** `storage_url` names where the file lives (`kb://…` embedded, `s3://…` on the engines): the rest must be equal. */
function withoutStorageUrls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutStorageUrls);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'storage_url')
        .map(([key, inner]) => [key, withoutStorageUrls(inner)]),
    );
  }
  return value;
}

describe('an embedded backup restored onto the engines', { timeout: 600_000 }, () => {
  let setup: DistributedEnv;
  let live: TestService;
  let restored: TestService | undefined;
  let probe: EmbeddingProbe;
  let built: BuiltKnowledgeBase;
  let work: { path: string; remove(): Promise<void> };
  const embedded = { KB_RUNTIME: 'embedded', KB_BOOTSTRAP_KEY: 'false', KB_LOG_LEVEL: 'warn' };

  beforeAll(async () => {
    setup = distributedEnv();
    work = await tempDir('kb-move-');
    live = await startTestService({ env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    probe = probeEmbeddings(await createEmbeddingProvider(configFrom({}).embedding));
    const upload = (name: string, content: string, options: { key: string; metadata?: unknown; documentId?: string }) =>
      live.upload<{ document_id: string; version: number }>(name, content, options);
    built = await buildKnowledgeBase(live.request, upload, live.keys.all);
  }, 600_000);

  afterAll(async () => {
    await restored?.close();
    await live?.close();
    await probe?.close();
    await work?.remove();
    await setup?.cleanup();
  }, 120_000);

  it('restores with the same ids, versions, timestamps, audit entries and keys, and searches the same', async () => {
    const expected = await observe(live.request, live.keys.all, built);
    const dir = path.join(work.path, 'backups');
    await kb(['backup', dir], { ...embedded, KB_DATA_DIR: live.dataDir });

    const out = await kb(['restore', dir, '--json'], setup.env, 300_000);
    expect(JSON.parse(out)).toMatchObject({ restored: true, runtime: 'embedded' });
    const again = await kbResult(['restore', dir], setup.env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/not empty/);

    restored = await startTestService({
      stages: 'none',
      embeddings: probe,
      env: { ...setup.env, KB_OUTBOUND_ALLOW_PRIVATE: 'true' },
    });
    const actual = await observe(restored.request, live.keys.all, built);
    for (const part of Object.keys(expected) as (keyof typeof expected)[]) {
      expect(withoutStorageUrls(actual[part]), part).toEqual(withoutStorageUrls(expected[part]));
    }
    expect(probe.texts).toEqual([]);
  });

  it('backs up to s3:// incrementally, and restores from there', async () => {
    const expected = await observe(live.request, live.keys.all, built);
    const s3 = {
      ...embedded,
      KB_DATA_DIR: live.dataDir,
      KB_S3_ENDPOINT: setup.env.KB_S3_ENDPOINT!,
      KB_S3_ACCESS_KEY: setup.env.KB_S3_ACCESS_KEY!,
      KB_S3_SECRET_KEY: setup.env.KB_S3_SECRET_KEY!,
      KB_S3_REGION: setup.env.KB_S3_REGION!,
    };
    const location = `s3://${setup.env.KB_S3_BUCKET}/backups/nightly`;
    // MinIO listens on loopback: refused as an S3 source's endpoint would be, unless allowed.
    const refused = await kbResult(['backup', location], s3);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/KB_OUTBOUND_ALLOW_PRIVATE/);

    const allowed = { ...s3, KB_OUTBOUND_ALLOW_PRIVATE: 'true' };
    type Written = { id: string; previous: string | null; written: { files: number; bytes: number } };
    const first = JSON.parse(await kb(['backup', location, '--json'], allowed)) as Written;
    const second = JSON.parse(await kb(['backup', location, '--json'], allowed)) as Written;
    expect(second.previous).toBe(first.id);
    // Nothing changed: only the six record files are written again; chunks and files are shared.
    expect(second.written.files).toBe(6);
    expect(second.written.bytes).toBeLessThan(first.written.bytes / 2);
    const verified = await kbResult(['backup', 'verify', location, '--json'], allowed);
    expect(verified.code, verified.stderr).toBe(0);

    const target = path.join(work.path, 'from-s3');
    await kb(['restore', location], { ...allowed, KB_DATA_DIR: target });
    const fromS3 = await startTestService({ dataDir: target, stages: 'none', embeddings: probe });
    try {
      const actual = await observe(fromS3.request, live.keys.all, built);
      for (const part of Object.keys(expected) as (keyof typeof expected)[]) {
        expect(withoutStorageUrls(actual[part]), part).toEqual(withoutStorageUrls(expected[part]));
      }
    } finally {
      await fromS3.close();
    }
    expect(probe.texts).toEqual([]);
  });
});
