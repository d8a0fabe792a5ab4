import { createHash } from 'node:crypto';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupManifest,
  type BackupPointer,
  backupInvalid,
  type FileEntry,
  manifestKey,
  POINTER_KEY,
  sha256,
} from './backup-format.ts';
import { forEachLimited, type ProgressListener, phaseProgress } from './backup-parts.ts';

async function readOptional(location: ObjectStore, key: string): Promise<Buffer | null> {
  try {
    return await location.getBuffer(key);
  } catch (error) {
    if ((error as { code?: string }).code === 'not-found') return null;
    throw error;
  }
}

function parseJson<T>(bytes: Buffer, what: string): T {
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch (error) {
    throw backupInvalid(`${what} is not JSON`, error);
  }
}

/**
 * The latest backup's manifest at `location`, checked against the hash the pointer gives; null
 * when the location holds no backup. Rejects `backup-invalid` when the pointer or manifest is damaged.
 */
export async function readLatestManifest(location: ObjectStore): Promise<BackupManifest | null> {
  const pointerBytes = await readOptional(location, POINTER_KEY);
  if (pointerBytes === null) return null;
  const pointer = parseJson<BackupPointer>(pointerBytes, POINTER_KEY);
  if (pointer.format !== BACKUP_FORMAT || typeof pointer.latest !== 'string' || !/^[\w-]+$/.test(pointer.latest)) {
    throw backupInvalid(`${POINTER_KEY} is not a backup pointer`);
  }
  const bytes = await readOptional(location, manifestKey(pointer.latest));
  if (bytes === null) throw backupInvalid(`the manifest of backup ${pointer.latest} is missing`);
  if (sha256(bytes) !== pointer.manifestSha256) {
    throw backupInvalid(`the manifest of backup ${pointer.latest} does not match its checksum (damaged)`);
  }
  const manifest = parseJson<BackupManifest>(bytes, manifestKey(pointer.latest));
  if (manifest.format !== BACKUP_FORMAT || manifest.formatVersion !== BACKUP_FORMAT_VERSION) {
    throw backupInvalid(
      `backup ${pointer.latest} has format ${String(manifest.format)} ${String(manifest.formatVersion)}; ` +
        `this version reads ${BACKUP_FORMAT} ${BACKUP_FORMAT_VERSION}`,
    );
  }
  return manifest;
}

/** What a verification found wrong with one file of the backup. */
export interface BackupProblem {
  readonly path: string;
  readonly problem: 'missing' | 'size' | 'checksum';
}

/** Every file a manifest names, once each. */
export function manifestFiles(manifest: BackupManifest): FileEntry[] {
  const files = new Map<string, FileEntry>();
  for (const entry of [...manifest.records, ...manifest.chunks, ...manifest.objects]) files.set(entry.path, entry);
  return [...files.values()];
}

/** Reads every file the manifest names and checks its size and SHA-256. */
export async function verifyFiles(
  location: ObjectStore,
  manifest: BackupManifest,
  onProgress?: ProgressListener,
): Promise<BackupProblem[]> {
  const files = manifestFiles(manifest);
  const problems: BackupProblem[] = [];
  const progress = phaseProgress(onProgress, 'verify', files.length);
  await forEachLimited(files, 8, async (file) => {
    let stream: AsyncIterable<Buffer>;
    try {
      stream = await location.get(file.path);
    } catch (error) {
      if ((error as { code?: string }).code !== 'not-found') throw error;
      problems.push({ path: file.path, problem: 'missing' });
      progress.step();
      return;
    }
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of stream) {
      hash.update(chunk);
      size += chunk.length;
    }
    if (size !== file.bytes) problems.push({ path: file.path, problem: 'size' });
    else if (hash.digest('hex') !== file.sha256) problems.push({ path: file.path, problem: 'checksum' });
    progress.step();
  });
  return problems.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** A file of a verified backup, checked again as it is read (a file changed since is refused). */
export async function readVerified(location: ObjectStore, file: FileEntry): Promise<Buffer> {
  const bytes = await readOptional(location, file.path);
  if (bytes === null) throw backupInvalid(`${file.path} is missing from the backup`);
  if (bytes.length !== file.bytes || sha256(bytes) !== file.sha256) {
    throw backupInvalid(`${file.path} does not match its checksum in the manifest (damaged)`);
  }
  return bytes;
}
