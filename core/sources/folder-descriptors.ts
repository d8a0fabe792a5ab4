import { constants, type Dirent, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, pipeline, Readable } from 'node:stream';
import { KbError } from '../errors/kb-error.ts';
import { isInside } from './folder-roots.ts';
import type { SourceContent } from './source-reader.ts';

/**
 * The file-system side of the folder reader: every file and directory is opened once, by a
 * descriptor that follows no symlink and never blocks, and is checked where it really is before
 * anything is read through it.
 *
 * Where a descriptor really is: on Linux, the link `/proc/self/fd/<fd>` names the file the
 * descriptor holds, whatever happened to the path since (a directory of the path swapped for a
 * symlink shows as the place it led to). Elsewhere, or without `/proc`, the path is resolved again
 * (`realpath`) and taken only when it names the same file (device and inode) as the descriptor:
 * sound against a swap of the file itself, but a directory listing is then read through the path,
 * which a concurrent swap of a directory may still redirect.
 */

/** Read only, no symlink as the last component, no wait on a FIFO, never a controlling terminal. */
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIRECTORY_FLAGS = FILE_FLAGS | constants.O_DIRECTORY;

const refused = (detail: string) => new KbError('path-refused', detail);

/** A failed open, in the words of the item: a symlink is refused, anything else cannot be read. */
function openError(error: unknown, what: string): KbError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EMLINK') {
    return refused(`The ${what} is a symbolic link; links are not followed in a folder source.`);
  }
  if (code === 'ENOTDIR') return refused(`The ${what} is not a directory any more.`);
  return new KbError('source-unreachable', `Cannot read the ${what}: ${(error as Error).message}`);
}

/** Where the file held by `fd` (opened as `file`, described by `info`) really is, or null when unknown. */
async function locationOf(fd: number, file: string, info: Stats): Promise<{ at: string; proc: boolean } | null> {
  if (process.platform === 'linux') {
    const at = await readlink(`/proc/self/fd/${fd}`).catch(() => null);
    if (at !== null) return { at, proc: true };
  }
  const real = await realpath(file).catch(() => null);
  if (real === null) return null;
  const there = await stat(real).catch(() => null);
  return there && there.dev === info.dev && there.ino === info.ino ? { at: real, proc: false } : null;
}

/** Opens `file` as a descriptor and checks that it is below `root`, or throws `path-refused`. */
async function openInside(
  file: string,
  root: string,
  flags: number,
  what: string,
): Promise<{ handle: FileHandle; info: Stats; proc: boolean }> {
  let handle: FileHandle;
  try {
    handle = await open(file, flags);
  } catch (error) {
    throw openError(error, what);
  }
  try {
    const info = await handle.stat();
    const location = await locationOf(handle.fd, file, info);
    if (location === null || !isInside(root, location.at)) {
      throw refused(`The ${what} leads outside the source folder.`);
    }
    return { handle, info, proc: location.proc };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** What a directory of a folder source holds, as its listing saw it (no symlink followed). */
export type DirectoryEntry =
  | { readonly name: string; readonly kind: 'directory' | 'symlink' | 'other' }
  | { readonly name: string; readonly kind: 'file'; readonly sizeBytes: number; readonly mtimeMs: number };

/**
 * The entries of `dir` (below `root`), sorted by name, of those `wanted` by name; a regular file
 * comes with its size and modification time (`lstat`: nothing is opened, a FIFO or device never
 * blocks the listing). The directory is opened once like a file (no symlink, checked below
 * `root`) and, on Linux, listed through its descriptor. Throws `path-refused` or
 * `source-unreachable` when the directory cannot be listed.
 */
export async function listDirectory(
  dir: string,
  root: string,
  wanted: (name: string, dirent: Dirent) => boolean,
): Promise<DirectoryEntry[]> {
  const { handle, proc } = await openInside(dir, root, DIRECTORY_FLAGS, 'directory');
  try {
    const base = proc ? `/proc/self/fd/${handle.fd}` : dir;
    const dirents = (await readdir(base, { withFileTypes: true })).filter((d) => wanted(d.name, d));
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const entries: DirectoryEntry[] = [];
    for (const dirent of dirents) {
      const { name } = dirent;
      if (dirent.isDirectory()) entries.push({ name, kind: 'directory' });
      else if (dirent.isSymbolicLink()) entries.push({ name, kind: 'symlink' });
      else if (!dirent.isFile()) entries.push({ name, kind: 'other' });
      else {
        const info = await lstat(path.join(base, name));
        if (info.isFile()) {
          entries.push({ name, kind: 'file', sizeBytes: info.size, mtimeMs: Math.trunc(info.mtimeMs) });
        } else {
          entries.push({ name, kind: info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : 'other' });
        }
      }
    }
    return entries;
  } catch (error) {
    if (error instanceof KbError) throw error;
    throw new KbError('source-unreachable', `Cannot read the directory: ${(error as Error).message}`);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** The content of one file of a folder source, read through its one descriptor; `close` releases it. */
export interface FolderFile extends SourceContent {
  readonly sizeBytes: number;
  close(): void;
}

/**
 * Opens the item `file` (below `root`) for reading: once, without following a symlink, without
 * waiting on a FIFO; only a regular file below `root` of at most `maxBytes` is taken (else
 * `path-refused` or `payload-too-large`). Every `open()` reads the same descriptor from the start
 * up to the size it had when opened (a file that grows is not read past it). `timeoutMs` after
 * opening, streams still going fail with `timeout` and later ones fail at once; `close()` ends
 * the streams still going and releases the descriptor (once their reads are done).
 */
export async function openFolderFile(
  file: string,
  root: string,
  limits: { readonly maxBytes: number; readonly timeoutMs: number },
): Promise<FolderFile> {
  const { handle, info } = await openInside(file, root, FILE_FLAGS, 'file');
  if (!info.isFile()) {
    await handle.close().catch(() => {});
    throw refused('The item is not a regular file (a FIFO, device, socket or directory is never read).');
  }
  if (info.size > limits.maxBytes) {
    await handle.close().catch(() => {});
    throw new KbError('payload-too-large', `The item is ${info.size} bytes; the limit is ${limits.maxBytes} bytes.`);
  }
  const size = info.size;
  const going = new Set<Readable>();
  let stopped: Error | null = null;
  let closed = false;
  const stop = (error: Error) => {
    stopped ??= error;
    for (const stream of going) stream.destroy(error);
  };
  const timer = setTimeout(
    () =>
      stop(
        new KbError('timeout', `Reading the file took longer than ${limits.timeoutMs} ms (KB_SOURCE_ITEM_TIMEOUT_MS).`),
      ),
    limits.timeoutMs,
  );
  timer.unref();
  return {
    sizeBytes: size,
    open() {
      const failure = stopped;
      if (failure) {
        return new Readable({
          read() {
            this.destroy(failure);
          },
        });
      }
      if (size === 0) return Readable.from([]);
      // The stream handed out ends (or fails) at once when stopped, even while a read of the
      // descriptor is still under way.
      const outer = new PassThrough();
      const inner = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
      going.add(outer);
      outer.once('close', () => going.delete(outer));
      pipeline(inner, outer, () => {});
      return outer;
    },
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      stop(new KbError('source-unreachable', 'The read of the file was stopped.'));
      // A file handle closes once the reads under way on it are done.
      handle.close().catch(() => {});
    },
  };
}
