import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { createFilesystemObjectStore } from '../ports/object-store/filesystem.adapter.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { backupInvalid } from './backup-format.ts';

/** Where backups are kept: a folder, or (see `parseS3Location`) an S3 bucket and prefix. */
export type BackupLocationSpec =
  | { readonly kind: 'folder'; readonly path: string }
  | { readonly kind: 's3'; readonly bucket: string; readonly prefix: string };

/** `s3://bucket/prefix` or a folder path. */
export function parseLocation(text: string): BackupLocationSpec {
  if (text.startsWith('s3://')) {
    const rest = text.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
      throw backupInvalid(`"${bucket}" is not an S3 bucket name (s3://bucket/prefix)`);
    }
    if (prefix !== '' && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(prefix)) {
      throw backupInvalid(`"${prefix}" is not a usable prefix: letters, digits, ".", "_", "-" and "/" only`);
    }
    return { kind: 's3', bucket, prefix };
  }
  if (text.trim() === '') throw backupInvalid('name the backup location: a folder or s3://bucket/prefix');
  return { kind: 'folder', path: path.resolve(text) };
}

/**
 * The folder `spec` names as an object store. `mustExist`: a missing folder is refused (a
 * verification or restore), else it is created on the first write (a backup).
 */
export async function openFolderLocation(folder: string, mustExist: boolean): Promise<ObjectStore> {
  if (mustExist) {
    const found = await stat(folder).catch(() => null);
    if (found === null || !found.isDirectory()) throw backupInvalid(`${folder} is not a folder holding a backup`);
  }
  return createFilesystemObjectStore({ root: folder });
}

/** Opens `location` for a backup (`write`) or a verification or restore (`read`). */
export async function openBackupLocation(
  location: string,
  purpose: 'write' | 'read',
  _config: Config,
): Promise<ObjectStore> {
  const spec = parseLocation(location);
  if (spec.kind === 'folder') return openFolderLocation(spec.path, purpose === 'read');
  throw backupInvalid('s3:// backup locations are not supported yet');
}
