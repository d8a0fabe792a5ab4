/** Which files `kb ingest` uploads from the paths it is given, and which it skips and why. */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export const INGEST_EXTENSIONS = ['.txt', '.md', '.markdown', '.csv', '.json', '.pdf', '.docx', '.xlsx'] as const;
const SUPPORTED = new Set<string>(INGEST_EXTENSIONS);

export interface SkippedPath {
  readonly path: string;
  readonly reason: string;
}

/** A file to ingest and the folder or file argument it was found under. */
export interface IngestFile {
  readonly path: string;
  /**
   * Its path relative to the folder argument it was found in, `/`-separated (`guide/index.md`);
   * for a file argument, the path as given relative to the working directory (absolute when
   * outside it). The document's `source_item` and name.
   */
  readonly item: string;
  /** The folder argument it was found in; null for a file argument. */
  readonly folder: string | null;
  /** Its size in bytes when it was found. */
  readonly size: number;
}

export interface CollectedFiles {
  readonly files: IngestFile[];
  readonly skipped: SkippedPath[];
}

const posix = (p: string): string => p.split(path.sep).join('/');

/** A file argument's item: relative to the working directory, else absolute. */
function fileItem(p: string): string {
  const absolute = path.resolve(p);
  const relative = path.relative(process.cwd(), absolute);
  return posix(relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? absolute : relative);
}

/** What one path found: its files and skipped paths, in name order. */
interface Found {
  readonly files: IngestFile[];
  readonly skipped: SkippedPath[];
}

/**
 * Walks files and folders in name order. Skips, with a reason: paths that do not exist, hidden
 * entries inside folders (names starting with `.`, not descended into), files whose extension is
 * not a supported format, and anything that is not a regular file or folder. The entries of a
 * folder are looked at all at once (a re-run of a large folder is mostly this walk); the result
 * keeps their name order.
 */
export async function collectFiles(paths: readonly string[]): Promise<CollectedFiles> {
  const walk = async (p: string, folder: string | null): Promise<Found> => {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(p);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return {
        files: [],
        skipped: [{ path: p, reason: code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})` }],
      };
    }
    if (info.isDirectory()) {
      const entries = (await readdir(p, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      const found = await Promise.all(
        entries.map((entry): Promise<Found> | Found => {
          const child = path.join(p, entry.name);
          if (entry.name.startsWith('.')) {
            return { files: [], skipped: [{ path: child, reason: 'hidden (name starts with ".")' }] };
          }
          return walk(child, folder ?? p);
        }),
      );
      return { files: found.flatMap((f) => f.files), skipped: found.flatMap((f) => f.skipped) };
    }
    if (!info.isFile()) return { files: [], skipped: [{ path: p, reason: 'not a regular file' }] };
    if (!SUPPORTED.has(path.extname(p).toLowerCase())) {
      const ext = path.extname(p) || '(no extension)';
      return {
        files: [],
        skipped: [{ path: p, reason: `${ext} is not a supported format (${INGEST_EXTENSIONS.join(' ')})` }],
      };
    }
    const item = folder === null ? fileItem(p) : posix(path.relative(folder, p));
    return { files: [{ path: p, item, folder, size: info.size }], skipped: [] };
  };
  const found: Found[] = [];
  for (const p of paths) found.push(await walk(p, null));
  return { files: found.flatMap((f) => f.files), skipped: found.flatMap((f) => f.skipped) };
}
