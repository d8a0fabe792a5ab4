import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';
import { listDirectory, openFolderFile } from './folder-descriptors.ts';
import { findFolder } from './folder-roots.ts';
import type { ItemMatcher } from './item-matcher.ts';
import type { ListedFailure, SourceEntry, SourceReader } from './source-reader.ts';

/**
 * A folder on the server. At every run the source's directory is checked again against the roots
 * granted to the source's workspace (`roots`); then the regular files below it are listed,
 * skipping hidden files and directories (`.` names) and anything that is not a regular file or a
 * directory (FIFOs, devices, sockets). No symlink is followed below the root: a symlink (to a file
 * or a directory) is listed as a failing item (`path-refused`).
 *
 * An item is read through one descriptor opened without following links and without blocking,
 * checked to be a regular file that really lies below the root (see `folder-descriptors.ts`),
 * read up to the size it had when opened and at most `maxBytes`, within `timeoutMs`; its hash
 * and its stored copy both come from that descriptor, which the content's `close` releases.
 */
export function createFolderReader(input: {
  readonly path: string;
  readonly roots: readonly string[];
  readonly matcher: ItemMatcher;
  /** The largest item read (the upload limit); a larger one is a failing item. */
  readonly maxBytes: number;
  /** Time one item's reads may take, from its opening. */
  readonly timeoutMs: number;
}): SourceReader {
  let root = '';
  const absolute = (key: string) => path.join(root, ...key.split('/'));

  async function* walk(dir: string, prefix: string): AsyncGenerator<SourceEntry | ListedFailure> {
    const entries = await listDirectory(
      dir,
      root,
      (name, dirent) => !name.startsWith('.') && (dirent.isDirectory() || input.matcher(prefix + name)),
    );
    for (const entry of entries) {
      const key = prefix + entry.name;
      switch (entry.kind) {
        case 'directory':
          try {
            yield* walk(path.join(dir, entry.name), `${key}/`);
          } catch (error) {
            if (!(error instanceof KbError)) throw error;
            yield { failure: { item: key, code: error.code, detail: error.message } };
          }
          break;
        case 'symlink':
          yield {
            failure: {
              item: key,
              code: 'path-refused',
              detail: 'The item is a symbolic link; links are not followed in a folder source.',
            },
          };
          break;
        case 'file':
          yield { key, sizeBytes: entry.sizeBytes, mtimeMs: entry.mtimeMs, etag: null, lastModified: null };
          break;
        case 'other':
          break;
      }
    }
  }

  return {
    async *list() {
      const found = await findFolder(input.path, input.roots);
      if (typeof found !== 'string') {
        if (found.reason === 'unusable') {
          throw new KbError(
            'source-unreachable',
            `The folder ${input.path} does not exist, is not a directory, or leads outside the folder roots granted to this workspace.`,
          );
        }
        throw new KbError('path-refused', `The folder ${input.path} ${found.message}.`);
      }
      root = found;
      yield* walk(root, '');
    },

    async read(entry) {
      return openFolderFile(absolute(entry.key), root, { maxBytes: input.maxBytes, timeoutMs: input.timeoutMs });
    },
  };
}
