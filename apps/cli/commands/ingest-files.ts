/** Which files `kb ingest` uploads from the paths it is given, and which it skips and why. */
import { readdirSync, type Stats, statSync } from 'node:fs';
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

/**
 * Walks files and folders in name order. Skips, with a reason: paths that do not exist, hidden
 * entries inside folders (names starting with `.`, not descended into), files whose extension is
 * not a supported format, and anything that is not a regular file or folder. The walk uses the
 * file system's synchronous calls: the command has nothing else to do meanwhile, and a re-run of a
 * large folder is mostly this walk (a promise per `stat` costs several times the call).
 */
export function collectFiles(paths: readonly string[]): CollectedFiles {
  const files: IngestFile[] = [];
  const skipped: SkippedPath[] = [];
  const walk = (p: string, folder: string | null): void => {
    let info: Stats;
    try {
      info = statSync(p);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      skipped.push({ path: p, reason: code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})` });
      return;
    }
    if (info.isDirectory()) {
      let entries: string[];
      try {
        entries = readdirSync(p, 'utf8');
      } catch (error) {
        skipped.push({ path: p, reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` });
        return;
      }
      for (const name of entries.sort((a, b) => a.localeCompare(b))) {
        const child = path.join(p, name);
        if (name.startsWith('.')) skipped.push({ path: child, reason: 'hidden (name starts with ".")' });
        else walk(child, folder ?? p);
      }
    } else if (!info.isFile()) {
      skipped.push({ path: p, reason: 'not a regular file' });
    } else if (!SUPPORTED.has(path.extname(p).toLowerCase())) {
      const ext = path.extname(p) || '(no extension)';
      skipped.push({ path: p, reason: `${ext} is not a supported format (${INGEST_EXTENSIONS.join(' ')})` });
    } else {
      const item = folder === null ? fileItem(p) : posix(path.relative(folder, p));
      files.push({ path: p, item, folder, size: info.size });
    }
  };
  for (const p of paths) walk(p, null);
  return { files, skipped };
}
