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
 *   be freed through the API. While the reserve is missing, the guard looks every
 *   `restoreEveryMs` and makes it again once the disk has room for it and `minFreeBytes` besides
 *   (never while a freeing write is under way, which the released space is for); the readiness
 *   probe does too.
 * - `probe()` is the readiness check `disk`: `unhealthy` when a small write fails, `degraded`
 *   below `minFreeBytes` free, else `healthy`.
 * - `close()` stops the timer.
 */
export interface DiskGuard {
  admit(bytes: number): Promise<void>;
  freeing<T>(write: () => Promise<T>): Promise<T>;
  probe(): Promise<{ readonly degraded: string } | undefined>;
  close(): Promise<void>;
}

export interface DiskGuardOptions {
  readonly dir: string;
  readonly minFreeBytes: number;
  readonly reserveBytes: number;
  /** How often a missing reserve is looked at again (default 10 s; 0: only by the readiness probe). */
  readonly restoreEveryMs?: number;
}

const RESTORE_EVERY_MS = 10_000;

const MB = 1024 * 1024;
const megabytes = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

export function createDiskGuard(options: DiskGuardOptions): DiskGuard {
  const reserveFile = path.join(options.dir, '.kb-reserve');
  let reserved = false;
  let closed = false;
  /** Freeing writes under way: the reserve is not made again while one runs. */
  let freeingNow = 0;
  /** The one attempt at making the reserve under way, if any. */
  let restoring: Promise<void> | undefined;

  async function freeBytes(): Promise<number> {
    const stats = await statfs(options.dir);
    return Number(stats.bavail) * Number(stats.bsize);
  }

  /** Writes the reserve file when it is missing and the disk has room for it and the minimum besides. */
  async function keepReserve(): Promise<void> {
    if (reserved || closed || freeingNow > 0 || options.reserveBytes <= 0) return;
    const free = await freeBytes();
    if (free < options.minFreeBytes + options.reserveBytes) return;
    try {
      await writeFile(reserveFile, Buffer.alloc(options.reserveBytes), { mode: 0o600 });
      reserved = true;
    } catch {
      await unlink(reserveFile).catch(() => undefined);
    }
  }

  /** One attempt at a time; failures (the directory gone, say) wait for the next. */
  function restore(): Promise<void> {
    restoring ??= keepReserve()
      .catch(() => undefined)
      .finally(() => {
        restoring = undefined;
      });
    return restoring;
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
  restoring = statfs(reserveFile)
    .then(
      () => {
        reserved = true;
      },
      () => keepReserve(),
    )
    .catch(() => undefined)
    .finally(() => {
      restoring = undefined;
    });

  const every = options.restoreEveryMs ?? RESTORE_EVERY_MS;
  const timer =
    options.reserveBytes > 0 && every > 0
      ? setInterval(() => {
          if (!reserved) void restore();
        }, every)
      : undefined;
  timer?.unref();

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
      freeingNow += 1;
      try {
        return await write();
      } catch (error) {
        if (!isStorageFull(error)) throw error;
        // A reserve being made now would take the room back: let it finish, then release it.
        await restoring;
        if (!(await release())) throw error;
        return await write();
      } finally {
        freeingNow -= 1;
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
      await restore();
      const free = await freeBytes();
      if (free < options.minFreeBytes) {
        return {
          degraded: `${megabytes(free)} free on the data volume, below KB_MIN_FREE_BYTES (${megabytes(options.minFreeBytes)}): uploads are refused with 507`,
        };
      }
      return undefined;
    },

    async close() {
      closed = true;
      clearInterval(timer);
      await restoring;
    },
  };
}
