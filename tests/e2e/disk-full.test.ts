import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readdir, rm, statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';

/**
 * The embedded runtime on a data directory that fills up: a real 48 MB tmpfs (mounting one needs
 * root, which CI has; elsewhere the suite says so and skips). Uploads are refused with 507 before
 * the disk is full and leave nothing staged; on a completely full disk reads and search still
 * work, readiness says so, a purge still frees space, and ingestion waits without failing or
 * spinning until space returns, then completes by itself.
 */
const MB = 1024 * 1024;
const isRoot = process.getuid?.() === 0;

let mountPoint: string | null = null;
const children: ChildService[] = [];

async function mountTmpfs(): Promise<string | null> {
  if (!isRoot) return null;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m,mode=0700', 'tmpfs', dir]);
    return dir;
  } catch {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
}

const mounted = await mountTmpfs();
if (!mounted) console.warn('disk-full suite skipped: mounting a tmpfs needs root');
mountPoint = mounted;

afterAll(async () => {
  await Promise.allSettled(children.map((child) => stopChild(child, 'SIGKILL')));
  if (mountPoint) {
    execFileSync('umount', ['-l', mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  }
});

async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return Number(stats.bavail) * Number(stats.bsize);
}

/** Grows `file` until the volume has at most `leave` bytes free (0: until the disk is full). */
async function fill(file: string, leave: number): Promise<void> {
  const handle = await open(file, 'a');
  try {
    const block = Buffer.alloc(64 * 1024, 1);
    for (;;) {
      const free = await freeBytes(path.dirname(file));
      if (free <= leave) return;
      const chunk = Math.min(block.length, free - leave);
      try {
        await handle.write(block, 0, Math.max(chunk, 1));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return;
        throw error;
      }
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

function text(sizeBytes: number, word: string): string {
  const words: string[] = [];
  let length = 0;
  while (length < sizeBytes) {
    const next = `${word} ${randomBytes(6).toString('hex')} `;
    words.push(next);
    length += next.length;
  }
  return words.join('');
}

async function upload(url: string, key: string, name: string, content: string) {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'text/plain' }), name);
  const response = await fetch(`${url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function documentStatus(url: string, key: string, id: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/documents/${id}`, { headers: { 'X-API-Key': key } });
  return String(((await response.json()) as { status?: unknown }).status);
}

async function waitForStatus(url: string, key: string, id: string, wanted: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await documentStatus(url, key, id);
    if (status === wanted) return;
    if (Date.now() > deadline) throw new Error(`document ${id} is ${status}, not ${wanted}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function readiness(url: string) {
  const response = await fetch(`${url}/health/ready`);
  return {
    status: response.status,
    body: (await response.json()) as { status: string; checks: Record<string, { status: string; message: string }> },
  };
}

describe.skipIf(!mounted)('a data directory that fills up', () => {
  const dir = mounted ?? '';
  const filler = path.join(dir, 'filler');
  const env = {
    KB_DATA_DIR: path.join(dir, 'data'),
    KB_BOOTSTRAP_KEY: 'false',
    KB_BOOTSTRAP_ACCOUNT: 'false',
    KB_OCR: 'false',
    KB_EMBEDDING_PROVIDER: 'local',
    KB_VECTOR_INDEX: 'false',
    KB_MIN_FREE_BYTES: String(8 * MB),
    KB_STORAGE_RESERVE_BYTES: String(4 * MB),
    KB_RETRY_BASE_MS: '100',
    KB_RETRY_MAX_MS: '1000',
    KB_LOG_LEVEL: 'warn',
  };

  it('refuses uploads with 507 before it is full, keeps reads working when full, frees space by purge, and resumes ingestion', async () => {
    const { key } = await createKey(env, {
      workspace: 'disk',
      name: 'e2e',
      permissions: 'read,write,search',
      plan: 'enterprise',
    });
    const api = await startChild(['serve'], env);
    children.push(api);

    // Room to spare: two documents are ingested as usual.
    const kept = await upload(api.url, key, 'kept.txt', text(20_000, 'aurora'));
    const purged = await upload(api.url, key, 'purged.txt', text(60_000, 'borealis'));
    expect([kept.status, purged.status]).toEqual([201, 201]);
    const keptId = String(kept.body.document_id);
    const purgedId = String(purged.body.document_id);
    await waitForStatus(api.url, key, keptId, 'completed');
    await waitForStatus(api.url, key, purgedId, 'completed');
    expect((await readiness(api.url)).body.checks.disk?.status).toBe('healthy');

    // Below KB_MIN_FREE_BYTES: uploads are refused with 507 and nothing is left staged.
    await fill(filler, 5 * MB);
    const stagedBefore = (await filesUnder(path.join(env.KB_DATA_DIR, 'objects'))).length;
    const refused = await upload(api.url, key, 'refused.txt', text(100_000, 'refused'));
    expect(refused.status).toBe(507);
    expect(refused.type).toContain('application/problem+json');
    expect(String(refused.body.type)).toMatch(/\/errors\/insufficient-storage$/);
    expect((await filesUnder(path.join(env.KB_DATA_DIR, 'objects'))).length).toBe(stagedBefore);
    const degraded = await readiness(api.url);
    expect(degraded.status).toBe(200);
    expect(degraded.body.checks.disk).toMatchObject({ status: 'degraded' });

    // Completely full: readiness is unhealthy, reads and search still answer, uploads get 507.
    await fill(filler, 0);
    const full = await readiness(api.url);
    expect(full.status).toBe(503);
    expect(full.body.checks.disk?.status).toBe('unhealthy');
    expect(full.body.checks.disk?.message).toMatch(/writes fail/);
    expect(await documentStatus(api.url, key, keptId)).toBe('completed');
    const search = await fetch(`${api.url}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'aurora', mode: 'keyword' }),
    });
    expect(search.status).toBe(200);
    expect(((await search.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    expect((await upload(api.url, key, 'refused2.txt', 'tiny')).status).toBe(507);

    // A purge works on the full disk (the reserve makes room for it) and removes the document's files.
    const objects = path.join(env.KB_DATA_DIR, 'objects');
    expect((await filesUnder(objects)).filter((file) => file.includes(purgedId)).length).toBeGreaterThan(0);
    const purge = await fetch(`${api.url}/api/v1/documents/${purgedId}?purge=true`, {
      method: 'DELETE',
      headers: { 'X-API-Key': key },
    });
    expect(purge.status).toBe(204);
    const gone = await fetch(`${api.url}/api/v1/documents/${purgedId}`, { headers: { 'X-API-Key': key } });
    expect(gone.status).toBe(404);
    expect((await filesUnder(objects)).filter((file) => file.includes(purgedId))).toEqual([]);
    await stopChild(api);
  }, 240_000);

  it('ingestion on a full disk waits without failing or flooding the log, and completes once space returns', async () => {
    await rm(filler, { force: true });
    const { key } = await createKey(env, {
      workspace: 'disk',
      name: 'wait',
      permissions: 'read,write',
      plan: 'enterprise',
    });
    // Accept an upload without ingesting it, then fill the disk and start the stages.
    const intake = await startChild(['serve', '--stages', 'none'], env);
    children.push(intake);
    const pending = await upload(intake.url, key, 'pending.txt', text(20_000, 'pending'));
    expect(pending.status).toBe(201);
    const id = String(pending.body.document_id);
    await stopChild(intake);

    // The stages start with a little room, and the disk is full right after.
    await fill(filler, 2 * MB);
    const worker = await startChild(['serve'], env);
    children.push(worker);
    await fill(filler, 0);
    await new Promise((r) => setTimeout(r, 8_000));
    const status = await documentStatus(worker.url, key, id);
    expect(['pending', 'processing'], worker.output()).toContain(status);
    // Backing off, not spinning: a handful of lines in eight seconds, not hundreds.
    expect(worker.output().split('\n').length, worker.output()).toBeLessThan(60);

    await rm(filler, { force: true });
    await waitForStatus(worker.url, key, id, 'completed', 150_000);
  }, 180_000);

  it('with the file store on a volume remounted read-only, answers uploads 507 and reads as usual, and heals', async () => {
    await rm(filler, { force: true });
    const { key } = await createKey(env, {
      workspace: 'disk',
      name: 'read-only',
      permissions: 'read,write,search',
      plan: 'enterprise',
    });
    const api = await startChild(['serve'], env);
    children.push(api);
    const before = await upload(api.url, key, 'before.txt', text(20_000, 'meridian'));
    expect(before.status).toBe(201);
    const beforeId = String(before.body.document_id);
    await waitForStatus(api.url, key, beforeId, 'completed');

    // Linux refuses to remount a volume read-only while files on it are open for writing (the
    // databases are), so the stored files' directory gets a mount of its own, made read-only.
    const objects = path.join(env.KB_DATA_DIR, 'objects');
    execFileSync('mount', ['--bind', objects, objects]);
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', objects]);
      const refused = await upload(api.url, key, 'refused.txt', text(20_000, 'refused'));
      expect(refused.status, `${JSON.stringify(refused.body)} ${api.output()}`).toBe(507);
      expect(String(refused.body.type)).toMatch(/\/errors\/insufficient-storage$/);
      expect(await documentStatus(api.url, key, beforeId)).toBe('completed');
      const search = await fetch(`${api.url}/api/v1/search`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'meridian', mode: 'keyword' }),
      });
      expect(search.status).toBe(200);
      expect(((await search.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
    } finally {
      execFileSync('umount', [objects]);
    }

    const after = await upload(api.url, key, 'after.txt', text(20_000, 'zenith'));
    expect(after.status).toBe(201);
    await waitForStatus(api.url, key, String(after.body.document_id), 'completed');
    await stopChild(api);
  }, 180_000);
});
