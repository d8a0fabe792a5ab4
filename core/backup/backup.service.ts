import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import type { BackupManifest } from './backup-format.ts';
import { backupInvalid } from './backup-format.ts';
import type { BackupStores, ProgressListener } from './backup-parts.ts';
import { type BackupProblem, readLatestManifest, verifyFiles } from './backup-reader.ts';
import { writeBackup } from './backup-writer.ts';
import { restoreBackup } from './restore-writer.ts';

/** Opens a backup location (`kb backup DEST`, `kb restore SRC`): a folder or `s3://bucket/prefix`. */
export type LocationOpener = (location: string, purpose: 'write' | 'read') => Promise<ObjectStore>;

export interface BackupServiceDeps {
  readonly stores: BackupStores;
  /** `embedded` or `distributed`: recorded in the manifest. */
  readonly runtime: string;
  readonly openLocation: LocationOpener;
}

export interface VerifyReport {
  readonly manifest: BackupManifest;
  readonly problems: readonly BackupProblem[];
}

export interface BackupService {
  /** Takes a backup into `location` while the service keeps running; answers its manifest. */
  backup(location: string, onProgress?: ProgressListener): Promise<BackupManifest>;
  /** Checks every file of the latest backup at `location` against its manifest; restores nothing. */
  verify(location: string, onProgress?: ProgressListener): Promise<VerifyReport>;
  /** Restores the latest backup at `location` (see `restoreBackup`). */
  restore(location: string, options?: { force?: boolean; onProgress?: ProgressListener }): Promise<BackupManifest>;
}

/**
 * Backup, verification and restore of a whole knowledge base, through the ports only, so one
 * format serves both runtimes and a backup of one restores onto the other (`core/backup/`).
 */
export function createBackupService(deps: BackupServiceDeps): BackupService {
  async function withLocation<T>(
    location: string,
    purpose: 'write' | 'read',
    body: (store: ObjectStore) => Promise<T>,
  ): Promise<T> {
    const store = await deps.openLocation(location, purpose);
    try {
      return await body(store);
    } finally {
      await store.close();
    }
  }

  return {
    backup(location, onProgress) {
      return withLocation(location, 'write', (store) =>
        writeBackup(deps.stores, store, { runtime: deps.runtime, ...(onProgress ? { onProgress } : {}) }),
      );
    },

    verify(location, onProgress) {
      return withLocation(location, 'read', async (store) => {
        const manifest = await readLatestManifest(store);
        if (manifest === null) throw backupInvalid(`${location} holds no backup (no backup.json)`);
        return { manifest, problems: await verifyFiles(store, manifest, onProgress) };
      });
    },

    restore(location, options = {}) {
      return withLocation(location, 'read', (store) => restoreBackup(deps.stores, store, location, options));
    },
  };
}
