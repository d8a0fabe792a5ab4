import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { checkOutboundTarget } from '../outbound/outbound-policy.ts';
import { createFilesystemObjectStore } from '../ports/object-store/filesystem.adapter.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { backupInvalid } from './backup-format.ts';
import { prefixedStore } from './prefixed-store.ts';

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

/**
 * Opens `location` for a backup (`write`) or a verification or restore (`read`). An `s3://`
 * location is reached at the S3 endpoint with the credentials of `KB_S3_*`; its endpoint must pass
 * the outbound policy as an S3 source's does (loopback, private and link-local addresses only with
 * `KB_OUTBOUND_ALLOW_PRIVATE=true`), except on the distributed runtime, whose own object store it is.
 */
export async function openBackupLocation(
  location: string,
  purpose: 'write' | 'read',
  config: Config,
): Promise<ObjectStore> {
  const spec = parseLocation(location);
  if (spec.kind === 'folder') return openFolderLocation(spec.path, purpose === 'read');
  const endpoint = config.s3.endpoint;
  if (!endpoint) {
    throw backupInvalid(`${location}: set KB_S3_ENDPOINT (and KB_S3_ACCESS_KEY, KB_S3_SECRET_KEY) to reach S3`);
  }
  if (config.runtime !== 'distributed') await checkOutboundTarget(endpoint, config.outbound);
  // The S3 client library is loaded for an S3 location only.
  const { createS3ObjectStore } = await import('../ports/object-store/s3.adapter.ts');
  const store = await createS3ObjectStore({
    endpoint,
    accessKey: config.s3.accessKey,
    secretKey: config.s3.secretKey,
    region: config.s3.region,
    bucket: spec.bucket,
  });
  return prefixedStore(store, spec.prefix);
}
