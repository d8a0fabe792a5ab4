// The prebuilt `kb` (`npm run build:cli`, see scripts/build-cli.ts) and whether it may run: only
// while every source file it was built from (and the package.json of each package bundled in) still
// has the size and modification time recorded at build time. Plain JavaScript, so `bin/kb.js` can
// decide before any TypeScript loader starts.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The build's record in `dist/cli/`: its entry file and the size and mtime of each input. */
export const BUILD_FILE = 'build.json';

/**
 * The address of the built entry under `root/dist/cli/` when the build is current, else
 * undefined (no build, an unreadable record, or any input changed, moved or gone): then the
 * caller runs the sources, so edited sources always run as they are.
 */
export function currentBuild(root) {
  const base = path.join(root, 'dist', 'cli');
  let record;
  try {
    record = JSON.parse(readFileSync(path.join(base, BUILD_FILE), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof record?.entry !== 'string' || typeof record.inputs !== 'object' || record.inputs === null)
    return undefined;
  for (const [input, recorded] of Object.entries(record.inputs)) {
    const stat = statSync(path.join(root, input), { throwIfNoEntry: false });
    if (!stat || stat.size !== recorded?.size || stat.mtimeMs !== recorded?.mtimeMs) return undefined;
  }
  const entry = path.join(base, record.entry);
  if (!statSync(entry, { throwIfNoEntry: false })?.isFile()) return undefined;
  return pathToFileURL(entry).href;
}
