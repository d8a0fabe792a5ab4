import { randomBytes } from 'node:crypto';
import { statfs, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';
import { isStorageFull } from '../errors/storage-errors.ts';

/**
 * The embedded runtime's guard of its data volume, where the databases and the stored files live.
 *
 * - `admit(bytes)` refuses (507 `insufficient-storage`) a write of `bytes` that would leave less
 *   than `minFreeBytes` free, so uploads are refused before the disk is completely full and the
 *   pipeline still has room for the versions already accepted.
 * - A reserve file of `reserveBytes` is kept in the data directory while there is room for it.
 *   `freeing(write)` runs a write that frees space (a delete, a purge); when the disk is so full
 *   that even it fails, the reserve is released and the write runs once more — so space can always
 *   be freed through the API. The reserve is made again once the disk has room.
 * - `probe()` is the readiness check `disk`: `unhealthy` when a small write fails, `degraded`
 *   below `minFreeBytes` free, else `healthy`.
 */
export interface DiskGuard {
  admit(bytes: number): Promise<void>;
  freeing<T>(write: () => Promise<T>): Promise<T>;
  probe(): Promise<{ readonly degraded: string } | undefined>;
}

export interface DiskGuardOptions {
  readonly dir: string;
  readonly minFreeBytes: number;
  readonly reserveBytes: number;
}

const MB = 1024 * 1024;
const megabytes = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

export function createDiskGuard(options: DiskGuardOptions): DiskGuard {
  const reserveFile = path.join(options.dir, '.kb-reserve');
  let reserved = false;

  async function freeBytes(): Promise<number> {
    const stats = await statfs(options.dir);
    return Number(stats.bavail) * Number(stats.bsize);
  }

  /** Writes the reserve file when it is missing and the disk has room for it and the minimum besides. */
  async function keepReserve(free: number): Promise<void> {
    if (reserved || options.reserveBytes <= 0) return;
    if (free < options.minFreeBytes + options.reserveBytes) return;
    try {
      await writeFile(reserveFile, Buffer.alloc(options.reserveBytes), { mode: 0o600 });
      reserved = true;
    } catch {
      await unlink(reserveFile).catch(() => undefined);
    }
  }

  async function release(): Promise<boolean> {
    if (options.reserveBytes <= 0) return false;
    try {
      await unlink(reserveFile);
      reserved = false;
      return true;
    } catch {
      return false;
    }
  }

  // At start: a reserve left by an earlier run counts; else make one if there is room.
  void freeBytes()
    .then(async (free) => {
      const left = await statfs(reserveFile).then(
        () => true,
        () => false,
      );
      reserved = left;
      await keepReserve(free);
    })
    .catch(() => undefined);

  return {
    async admit(bytes) {
      const free = await freeBytes();
      if (free - Math.max(0, bytes) < options.minFreeBytes) {
        throw new KbError(
          'insufficient-storage',
          `Only ${megabytes(free)} are free on the data volume; writing ${megabytes(bytes)} more would leave less than KB_MIN_FREE_BYTES (${megabytes(options.minFreeBytes)}).`,
        );
      }
    },

    async freeing(write) {
      try {
        return await write();
      } catch (error) {
        if (!isStorageFull(error) || !(await release())) throw error;
        return await write();
      }
    },

    async probe() {
      const probeFile = path.join(options.dir, `.kb-probe-${randomBytes(4).toString('hex')}`);
      try {
        await writeFile(probeFile, Buffer.alloc(4096));
      } catch (error) {
        if (isStorageFull(error)) {
          const code = (error as { code?: string }).code ?? 'ENOSPC';
          throw new Error(`writes fail: no space left on the data volume (${code})`);
        }
        throw error;
      } finally {
        await unlink(probeFile).catch(() => undefined);
      }
      const free = await freeBytes();
      await keepReserve(free);
      if (free < options.minFreeBytes) {
        return {
          degraded: `${megabytes(free)} free on the data volume, below KB_MIN_FREE_BYTES (${megabytes(options.minFreeBytes)}): uploads are refused with 507`,
        };
      }
      return undefined;
    },
  };
}
