import { createReadStream, type Dirent } from 'node:fs';
import { opendir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';
import { isInside, resolveFolderPath } from './folder-roots.ts';
import type { ItemMatcher } from './item-matcher.ts';
import type { ListedFailure, SourceEntry, SourceReader } from './source-reader.ts';

/**
 * A folder on the server. Lists regular files below the source's directory (checked again
 * against the roots at every run), skipping hidden files and directories (`.` names); a symlink
 * is followed only to a file inside the source's directory; one that leads outside is listed as
 * a failing item (`path-refused`), one to a directory is not followed.
 */
export function createFolderReader(input: {
  readonly path: string;
  readonly roots: readonly string[];
  readonly matcher: ItemMatcher;
}): SourceReader {
  let root = '';
  const absolute = (key: string) => path.join(root, ...key.split('/'));

  async function* walk(dir: string, prefix: string): AsyncGenerator<SourceEntry | ListedFailure> {
    const entries: Dirent[] = [];
    for await (const entry of await opendir(dir)) entries.push(entry);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const key = prefix + entry.name;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        yield* walk(full, `${key}/`);
        continue;
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      if (!input.matcher(key)) continue;
      try {
        if (entry.isSymbolicLink()) {
          const target = await realpath(full).catch(() => null);
          if (target === null || !isInside(root, target)) {
            yield {
              failure: { item: key, code: 'path-refused', detail: 'The symlink leads outside the source folder.' },
            };
            continue;
          }
        }
        const info = await stat(full);
        if (!info.isFile()) continue;
        yield { key, sizeBytes: info.size, mtimeMs: Math.trunc(info.mtimeMs), etag: null, lastModified: null };
      } catch (error) {
        yield {
          failure: {
            item: key,
            code: 'source-unreachable',
            detail: `Cannot read the file: ${(error as Error).message}`,
          },
        };
      }
    }
  }

  return {
    async *list() {
      const there = await stat(input.path).catch(() => null);
      if (!there?.isDirectory()) {
        throw new KbError('source-unreachable', `The folder ${input.path} does not exist or cannot be read.`);
      }
      root = await resolveFolderPath(input.path, input.roots);
      try {
        yield* walk(root, '');
      } catch (error) {
        if (error instanceof KbError) throw error;
        throw new KbError('source-unreachable', `The folder ${input.path} cannot be read: ${(error as Error).message}`);
      }
    },

    async read(entry) {
      const file = absolute(entry.key);
      // The file may have been replaced by a symlink since it was listed.
      const target = await realpath(file);
      if (!isInside(root, target)) throw new KbError('path-refused', 'The file leads outside the source folder.');
      return { open: () => createReadStream(target) };
    },
  };
}
