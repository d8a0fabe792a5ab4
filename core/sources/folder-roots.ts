import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';
import { WORKSPACE_ID_PATTERN } from '../model/account-records.model.ts';

/** A directory folder sources may read under, granted to one workspace or to every one. */
export interface FolderRoot {
  /** A workspace id, or {@link EVERY_WORKSPACE}. */
  readonly workspace: string;
  /** Absolute, normalised (not resolved: symlinks are resolved when a path is checked). */
  readonly path: string;
}

/** The grant of a root to every workspace (`*=/path`, or a plain `/path`). */
export const EVERY_WORKSPACE = '*';

/**
 * Reads `KB_SOURCE_FOLDER_ROOTS`: entries separated by `:`, each `<workspace id>=/abs/path` (the
 * root of that workspace), `*=/abs/path` (a root of every workspace) or a plain `/abs/path` (the
 * older form, taken as `*=`). Problems name the entry at fault.
 */
export function parseFolderRoots(value: string): { roots: FolderRoot[]; problems: string[] } {
  const roots: FolderRoot[] = [];
  const problems: string[] = [];
  for (const entry of value
    .split(':')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const plain = entry.startsWith('/') || !entry.includes('=');
    const at = entry.indexOf('=');
    const workspace = plain ? EVERY_WORKSPACE : entry.slice(0, at).trim();
    const dir = plain ? entry : entry.slice(at + 1).trim();
    if (workspace !== EVERY_WORKSPACE && !WORKSPACE_ID_PATTERN.test(workspace)) {
      problems.push(
        `KB_SOURCE_FOLDER_ROOTS: "${workspace}" in "${entry}" is neither * nor a workspace id (1–64 letters, digits, _ or -)`,
      );
      continue;
    }
    if (!path.isAbsolute(dir)) {
      problems.push(`KB_SOURCE_FOLDER_ROOTS: "${dir}" in "${entry}" is not an absolute path`);
      continue;
    }
    roots.push({ workspace, path: path.resolve(dir) });
  }
  return { roots, problems };
}

/** The root directories `workspaceId` may read under: its own and those granted to every workspace. */
export function rootsOf(roots: readonly FolderRoot[], workspaceId: string): string[] {
  return [
    ...new Set(roots.filter((r) => r.workspace === EVERY_WORKSPACE || r.workspace === workspaceId).map((r) => r.path)),
  ];
}

/** True when `candidate` (canonical) is `root` (canonical) or below it. */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Why a path is not a usable folder: `disabled` (no root granted), `malformed` (relative, or with
 * a `..` segment), `outside` (not below any root, seen without touching the file system) or
 * `unusable` (below a root as written, but missing, not a directory, or leading outside once
 * symlinks are resolved). `message` completes "path …".
 */
export interface FolderRefusal {
  readonly reason: 'disabled' | 'malformed' | 'outside' | 'unusable';
  readonly message: string;
}

/**
 * The one answer for every path outside the roots granted to the workspace, whether it exists or
 * not, and whether it is a file or a directory: nothing about the server's files shows through it.
 */
export const OUTSIDE_ROOTS =
  'is not a directory under the folder roots granted to this workspace (KB_SOURCE_FOLDER_ROOTS)';

/** The canonical directory of `input` under one of `roots`, or why not (see {@link resolveFolderPath}). */
export async function findFolder(input: string, roots: readonly string[]): Promise<string | FolderRefusal> {
  if (roots.length === 0) {
    return {
      reason: 'disabled',
      message: 'is refused: no folder root is granted to this workspace (KB_SOURCE_FOLDER_ROOTS)',
    };
  }
  if (!path.isAbsolute(input)) return { reason: 'malformed', message: 'must be an absolute path' };
  if (input.split(/[\\/]+/).includes('..')) return { reason: 'malformed', message: 'must not contain `..` segments' };
  const realRoots = (await Promise.all(roots.map((root) => realpath(root).catch(() => null)))).filter(
    (root): root is string => root !== null,
  );
  // Outside every root as written: refused before anything of the path is looked at.
  const written = path.normalize(input);
  if (![...roots, ...realRoots].some((root) => isInside(root, written))) {
    return { reason: 'outside', message: OUTSIDE_ROOTS };
  }
  const unusable: FolderRefusal = { reason: 'unusable', message: OUTSIDE_ROOTS };
  const real = await realpath(input).catch(() => null);
  if (real === null || !realRoots.some((root) => isInside(root, real))) return unusable;
  const info = await stat(real).catch(() => null);
  return info?.isDirectory() ? real : unusable;
}

/**
 * The canonical directory of a folder source: `input` must be absolute, have no `..` segment,
 * exist as a directory, and, with symlinks resolved, lie under one of `roots` (those granted to
 * the workspace, see {@link rootsOf}; themselves resolved). Anything else is refused with
 * `path-refused` (422) naming the field; a path that is not such a directory gets one answer
 * ({@link OUTSIDE_ROOTS}) whether it exists or not, so the answer tells nothing of the server's files.
 */
export async function resolveFolderPath(input: string, roots: readonly string[]): Promise<string> {
  const found = await findFolder(input, roots);
  if (typeof found === 'string') return found;
  throw new KbError('path-refused', `path ${found.message}.`, { errors: [{ field: 'path', message: found.message }] });
}
