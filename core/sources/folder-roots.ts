import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';

const refused = (message: string) =>
  new KbError('path-refused', `path ${message}.`, { errors: [{ field: 'path', message }] });

/** True when `candidate` (canonical) is `root` (canonical) or below it. */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * The canonical directory of a folder source: `input` must be absolute, have no `..` segment,
 * exist as a directory, and, with symlinks resolved, lie under one of the operator's `roots`
 * (themselves resolved). Anything else is refused with `path-refused` (422) naming the field.
 */
export async function resolveFolderPath(input: string, roots: readonly string[]): Promise<string> {
  if (roots.length === 0) {
    throw refused('is refused: folder sources are disabled (the operator has set no KB_SOURCE_FOLDER_ROOTS)');
  }
  if (!path.isAbsolute(input)) throw refused('must be an absolute path');
  if (input.split(/[\\/]+/).includes('..')) throw refused('must not contain `..` segments');
  let real: string;
  try {
    real = await realpath(input);
  } catch {
    throw refused('does not exist or cannot be read');
  }
  const realRoots = await Promise.all(roots.map((root) => realpath(root).catch(() => null)));
  if (!realRoots.some((root) => root !== null && isInside(root, real))) {
    throw refused('is outside the folder roots the operator allows (KB_SOURCE_FOLDER_ROOTS)');
  }
  if (!(await stat(real)).isDirectory()) throw refused('is not a directory');
  return real;
}
