import { mkdtemp, rm, stat, statfs, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import { createDiskGuard, type DiskGuard, type DiskGuardOptions } from '../../../core/runtime/disk-guard.ts';

const dirs: string[] = [];
const guards: DiskGuard[] = [];
afterEach(async () => {
  await Promise.all(guards.splice(0).map((guard) => guard.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function guardOf(options: DiskGuardOptions): DiskGuard {
  const guard = createDiskGuard(options);
  guards.push(guard);
  return guard;
}

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-disk-guard-'));
  dirs.push(dir);
  return dir;
}

async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return Number(stats.bavail) * Number(stats.bsize);
}

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
const reserveOf = (dir: string) =>
  stat(path.join(dir, '.kb-reserve')).then(
    (s) => s.size,
    () => null,
  );

describe('the data volume guard', () => {
  it('admits a write that leaves the minimum free and refuses one that would not, with 507 insufficient-storage', async () => {
    const dir = await dataDir();
    const free = await freeBytes(dir);
    const guard = guardOf({ dir, minFreeBytes: free / 2, reserveBytes: 0 });
    await expect(guard.admit(1024)).resolves.toBeUndefined();
    const refusal = await guard.admit(free).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KbError);
    expect(refusal).toMatchObject({ code: 'insufficient-storage' });
    expect((refusal as Error).message).toMatch(/KB_MIN_FREE_BYTES/);
  });

  it('keeps a reserve file and releases it to let a write that frees space run again on a full disk', async () => {
    const dir = await dataDir();
    const guard = guardOf({ dir, minFreeBytes: 0, reserveBytes: 64 * 1024, restoreEveryMs: 0 });
    await vi.waitFor(async () => expect(await reserveOf(dir)).toBe(64 * 1024));
    let calls = 0;
    const result = await guard.freeing(async () => {
      calls += 1;
      if (calls === 1) throw enospc();
      return 'purged';
    });
    expect(result).toBe('purged');
    expect(calls).toBe(2);
    expect(await reserveOf(dir)).toBeNull();
    // Once there is room again, the readiness probe makes the reserve anew.
    await expect(guard.probe()).resolves.toBeUndefined();
    expect(await reserveOf(dir)).toBe(64 * 1024);
  });

  it('makes the reserve again by itself once there is room, not while the write it was released for runs', async () => {
    const dir = await dataDir();
    const guard = guardOf({ dir, minFreeBytes: 0, reserveBytes: 64 * 1024, restoreEveryMs: 20 });
    await vi.waitFor(async () => expect(await reserveOf(dir)).toBe(64 * 1024));
    let calls = 0;
    let duringRetry: number | null | undefined;
    await guard.freeing(async () => {
      calls += 1;
      if (calls === 1) throw enospc();
      // Several rounds of the timer pass while the delete runs: the released room stays free for it.
      await new Promise((resolve) => setTimeout(resolve, 200));
      duringRetry = await reserveOf(dir);
    });
    expect(duringRetry).toBeNull();
    // Nobody polls readiness: the guard makes the reserve again on its own.
    await vi.waitFor(async () => expect(await reserveOf(dir)).toBe(64 * 1024), { timeout: 5000 });
  });

  it('stops looking after the reserve once closed', async () => {
    const dir = await dataDir();
    const guard = guardOf({ dir, minFreeBytes: 0, reserveBytes: 64 * 1024, restoreEveryMs: 20 });
    await vi.waitFor(async () => expect(await reserveOf(dir)).toBe(64 * 1024));
    await guard.close();
    await guard
      .freeing(async () => {
        throw enospc();
      })
      .catch(() => undefined);
    await unlink(path.join(dir, '.kb-reserve')).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await reserveOf(dir)).toBeNull();
  });

  it('rethrows other failures without touching the reserve', async () => {
    const dir = await dataDir();
    const guard = guardOf({ dir, minFreeBytes: 0, reserveBytes: 64 * 1024 });
    await vi.waitFor(async () => expect(await reserveOf(dir)).toBe(64 * 1024));
    const failure = new Error('no such document');
    await expect(guard.freeing(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(await reserveOf(dir)).toBe(64 * 1024);
  });

  it('reports degraded below the minimum free space', async () => {
    const dir = await dataDir();
    const guard = guardOf({ dir, minFreeBytes: Number.MAX_SAFE_INTEGER, reserveBytes: 0 });
    const answer = await guard.probe();
    expect(answer?.degraded).toMatch(/below KB_MIN_FREE_BYTES .*uploads are refused with 507/);
  });
});
