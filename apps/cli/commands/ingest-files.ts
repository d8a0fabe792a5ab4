/** Which files `kb ingest` uploads from the paths it is given, and which it skips and why. */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export const INGEST_EXTENSIONS = ['.txt', '.md', '.markdown', '.csv', '.json', '.pdf', '.docx', '.xlsx'] as const;
const SUPPORTED = new Set<string>(INGEST_EXTENSIONS);

export interface SkippedPath {
  readonly path: string;
  readonly reason: string;
}

export interface CollectedFiles {
  readonly files: string[];
  readonly skipped: SkippedPath[];
}

/**
 * Walks files and folders in name order. Skips, with a reason: paths that do not exist, hidden
 * entries inside folders (names starting with `.`, not descended into), files whose extension is
 * not a supported format, and anything that is not a regular file or folder.
 */
export async function collectFiles(paths: readonly string[]): Promise<CollectedFiles> {
  const files: string[] = [];
  const skipped: SkippedPath[] = [];
  const walk = async (p: string) => {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(p);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      skipped.push({ path: p, reason: code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})` });
      return;
    }
    if (info.isDirectory()) {
      const entries = await readdir(p, { withFileTypes: true });
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const child = path.join(p, entry.name);
        if (entry.name.startsWith('.')) skipped.push({ path: child, reason: 'hidden (name starts with ".")' });
        else await walk(child);
      }
    } else if (!info.isFile()) {
      skipped.push({ path: p, reason: 'not a regular file' });
    } else if (!SUPPORTED.has(path.extname(p).toLowerCase())) {
      const ext = path.extname(p) || '(no extension)';
      skipped.push({
        path: p,
        reason: `${ext} is not a supported format (${INGEST_EXTENSIONS.join(' ')})`,
      });
    } else {
      files.push(p);
    }
  };
  for (const p of paths) await walk(p);
  return { files, skipped };
}
