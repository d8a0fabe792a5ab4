import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';

const run = promisify(execFile);

async function files(dir: string, base = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((e) => !['node_modules', '__pycache__', '.ruff_cache'].includes(e.name) && !e.name.endsWith('.egg-info'))
      .map((e) =>
        e.isDirectory() ? files(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name))],
      ),
  );
  return nested.flat().sort();
}

/**
 * The committed clients are what `npm run clients:generate` makes of the current OpenAPI document:
 * regenerated into a scratch copy (the generators install themselves on first use), every file the
 * same. After a route or schema change, run `npm run clients:generate` and commit the result.
 */
describe('clients/', { timeout: 600_000 }, () => {
  it('matches what `npm run clients:generate` generates from the current OpenAPI document', async () => {
    const scratch = path.join(REPO_ROOT, '.tmp', `clients-check-${process.pid}`);
    try {
      await run(process.execPath, ['--import', 'tsx', 'scripts/generate-clients.ts', '--out', scratch], {
        cwd: REPO_ROOT,
        maxBuffer: 16 * 1024 * 1024,
      });
      const committed = await files(path.join(REPO_ROOT, 'clients'));
      expect(await files(scratch)).toEqual(committed);
      const differing: string[] = [];
      for (const file of committed) {
        const [a, b] = await Promise.all([
          readFile(path.join(REPO_ROOT, 'clients', file), 'utf8'),
          readFile(path.join(scratch, file), 'utf8'),
        ]);
        if (a !== b) differing.push(file);
      }
      expect(differing, 'run `npm run clients:generate` and commit the result').toEqual([]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
