/**
 * The built dashboard (`apps/dashboard/dist`, made by `npm run build:dashboard`), read into
 * memory once. Only files that exist in the build are ever served, so no request path can reach
 * outside it.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DashboardAsset {
  readonly body: Buffer;
  readonly type: string;
  /** Content-hashed file names never change: cache them for a year. */
  readonly immutable: boolean;
}

export const DASHBOARD_DIST = fileURLToPath(new URL('../../dashboard/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Every file of the build by its path relative to the build folder (`index.html`, `assets/…`); null when not built. */
export async function loadDashboardAssets(dir: string = DASHBOARD_DIST): Promise<Map<string, DashboardAsset> | null> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const assets = new Map<string, DashboardAsset>();
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, full).split(path.sep).join('/');
    assets.set(relative, {
      body: await readFile(full),
      type: TYPES[path.extname(entry.name).toLowerCase()] ?? 'application/octet-stream',
      immutable: relative.startsWith('assets/'),
    });
  }
  return assets.has('index.html') ? assets : null;
}
