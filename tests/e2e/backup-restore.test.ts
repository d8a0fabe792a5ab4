import { cp, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../core/config/config.ts';
import { createEmbeddingProvider } from '../../core/runtime/create-embedding-provider.ts';
import { kb, kbResult, tempDir } from '../../support/child-service.ts';
import { type BuiltKnowledgeBase, buildKnowledgeBase, observe } from '../support/backup-scenario.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { type EmbeddingProbe, probeEmbeddings } from '../support/embedding-probe.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * `kb backup` of a running embedded service while a client keeps uploading, `kb restore` into an
 * empty data directory, and a restored service that answers the same without embedding anything.
 */

const ENV = { KB_BOOTSTRAP_KEY: 'false', KB_LOG_LEVEL: 'warn' };

describe('backup and restore on the embedded runtime', { timeout: 300_000 }, () => {
  const cleanups = cleanupsAfterAll();
  let live: TestService;
  let built: BuiltKnowledgeBase;
  let expected: Awaited<ReturnType<typeof observe>>;
  let backupDir = '';
  let completedBeforeBackup: string[] = [];
  const uploadedMeanwhile: string[] = [];
  let probe: EmbeddingProbe;

  beforeAll(async () => {
    live = await startTestService({ env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    cleanups.push(() => live.close());
    // The configured model, as the live service's: queries embed with it, document texts are counted.
    probe = probeEmbeddings(await createEmbeddingProvider(configFrom({}).embedding));
    cleanups.push(() => probe.close());
    const work = await tempDir('kb-backup-');
    cleanups.push(work.remove);
    backupDir = path.join(work.path, 'backups');
    const upload = (name: string, content: string, options: { key: string; metadata?: unknown; documentId?: string }) =>
      live.upload<{ document_id: string; version: number }>(name, content, options);
    built = await buildKnowledgeBase(live.request, upload, live.keys.all);
    const sources = await live.request<{ sources: { id: string }[] }>('GET', '/api/v1/sources');
    await live.runtime.ports.sources.putItem({
      sourceId: sources.body.sources[0]!.id,
      itemKey: 'page.md',
      documentId: built.ids.harbour!,
      sizeBytes: 120,
      mtimeMs: null,
      etag: '"abc"',
      lastModified: 'Wed, 01 May 2024 10:00:00 GMT',
      sha256: null,
    });
    expected = await observe(live.request, live.keys.all, built);
  }, 240_000);

  it('backs up while a client keeps uploading into another workspace', async () => {
    const before = await live.request<{ documents: { id: string; status: string }[] }>(
      'GET',
      '/api/v1/documents?page_size=100',
      { key: live.keys.otherWorkspace },
    );
    completedBeforeBackup = before.body.documents.filter((d) => d.status === 'completed').map((d) => d.id);
    let uploading = true;
    const client = (async () => {
      for (let i = 0; uploading; i += 1) {
        const res = await live.upload<{ document_id: string }>(
          `note-${i}.md`,
          `Note ${i}: the tidal harbour log, entry ${i}.\n`,
          {
            key: live.keys.otherWorkspace,
          },
        );
        if (res.status === 201) uploadedMeanwhile.push(res.body.document_id);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // Some uploads are in and ingested before the backup starts, others go on during it.
    while (uploadedMeanwhile.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    await live.waitForStatus(uploadedMeanwhile[0]!, 'completed', { key: live.keys.otherWorkspace });
    completedBeforeBackup.push(uploadedMeanwhile[0]!);
    const out = await kb(['backup', backupDir, '--json'], { ...ENV, KB_DATA_DIR: live.dataDir });
    uploading = false;
    await client;
    const manifest = JSON.parse(out) as { counts: Record<string, number>; exact: boolean };
    expect(manifest.exact).toBe(true);
    expect(manifest.counts.documents).toBeGreaterThanOrEqual(4 + completedBeforeBackup.length);
    expect(manifest.counts.vectors).toBe(manifest.counts.chunks);
    expect(uploadedMeanwhile.length).toBeGreaterThan(3);

    const verified = await kbResult(['backup', 'verify', backupDir, '--json'], { ...ENV, KB_DATA_DIR: live.dataDir });
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, problems: [] });
  });

  it('restores into an empty data directory; the restored service answers the same without embedding', async () => {
    const target = await tempDir('kb-restored-');
    cleanups.push(target.remove);
    const dataDir = path.join(target.path, 'kb');
    await kb(['restore', backupDir, '--json'], { ...ENV, KB_DATA_DIR: dataDir });

    const restored = await startTestService({
      dataDir,
      stages: 'none',
      embeddings: probe,
      env: { KB_OUTBOUND_ALLOW_PRIVATE: 'true' },
    });
    cleanups.push(() => restored.close());
    // The old key works, and every answer is the same.
    const actual = await observe(restored.request, live.keys.all, built);
    for (const part of Object.keys(expected) as (keyof typeof expected)[])
      expect(actual[part], part).toEqual(expected[part]);
    const sources = (
      await restored.request<{ sources: { id: string }[] }>('GET', '/api/v1/sources', { key: live.keys.all })
    ).body.sources;
    expect(await restored.runtime.ports.sources.listItems(sources[0]!.id)).toEqual([
      expect.objectContaining({ itemKey: 'page.md', documentId: built.ids.harbour, etag: '"abc"' }),
    ]);

    // The uploads made while the backup ran: whatever was completed before it is there and
    // completed; nothing is half there (a version is completed with its chunks, or pending with its file).
    const files = await restored.storedObjects();
    const restoredOther: string[] = [];
    for (const id of uploadedMeanwhile) {
      const doc = await restored.request<{ status: string }>('GET', `/api/v1/documents/${id}`, {
        key: live.keys.otherWorkspace,
      });
      if (completedBeforeBackup.includes(id)) expect(doc.body.status).toBe('completed');
      if (doc.status === 404) continue;
      restoredOther.push(id);
      expect(['completed', 'pending']).toContain(doc.body.status);
      expect(files.some((key) => key.includes(id))).toBe(true);
      if (doc.body.status === 'completed') {
        const chunks = await restored.request<{ chunks: unknown[] }>('GET', `/api/v1/chunks/${id}`, {
          key: live.keys.otherWorkspace,
        });
        expect(chunks.status, chunks.text).toBe(200);
        expect(chunks.body.chunks.length).toBeGreaterThan(0);
      }
    }
    expect(restoredOther.length).toBeGreaterThanOrEqual(completedBeforeBackup.length);
    // Queries were embedded to search; no document text was.
    expect(probe.texts).toEqual([]);
  });

  it('refuses to restore into a target that holds data', async () => {
    const target = await tempDir('kb-restored-');
    cleanups.push(target.remove);
    const dataDir = path.join(target.path, 'kb');
    await kb(['restore', backupDir], { ...ENV, KB_DATA_DIR: dataDir });
    const again = await kbResult(['restore', backupDir], { ...ENV, KB_DATA_DIR: dataDir });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/not empty/);
  });

  it('refuses a damaged backup and leaves the target unchanged', async () => {
    const work = await tempDir('kb-damaged-');
    cleanups.push(work.remove);
    const damaged = path.join(work.path, 'backups');
    await cp(backupDir, damaged, { recursive: true });
    const chunkFiles = await readdir(path.join(damaged, 'chunks'));
    const victim = path.join(damaged, 'chunks', chunkFiles[0]!);
    const handle = await open(victim, 'r+');
    const size = (await stat(victim)).size;
    await handle.write(Buffer.from([0xff, 0x00, 0xff]), 0, 3, Math.floor(size / 2));
    await handle.close();

    const verify = await kbResult(['backup', 'verify', damaged], { ...ENV, KB_DATA_DIR: path.join(work.path, 'x') });
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(chunkFiles[0]);

    const dataDir = path.join(work.path, 'kb');
    const refused = await kbResult(['restore', damaged], { ...ENV, KB_DATA_DIR: dataDir });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/damaged or incomplete/);
    const target = await startTestService({ dataDir, stages: 'none' });
    cleanups.push(() => target.close());
    expect(await target.runtime.ports.documents.listWorkspaces()).toEqual([]);
    expect(await target.storedObjects()).toEqual([]);
    const oldKey = await target.request('GET', '/api/v1/documents', { key: live.keys.all });
    expect(oldKey.status).toBe(401);
  });
});
