import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';

const run = promisify(execFile);

/** `npm <args>` in the checkout, in the environment of a user's shell (no npm_* variables of a running npm). */
async function npm(args: string[]) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
  );
  return run('npm', args, { cwd: REPO_ROOT, env });
}

// onnxruntime-node's install script (denied in package.json's allowScripts) would download CUDA
// libraries from outside the npm registry: CI's own `npm install` on a machine that reaches only the
// registry fails if it runs.
describe('npm in the checkout', { timeout: 120_000 }, () => {
  it('warns about no unknown project config', async () => {
    const { stdout, stderr } = await npm(['pkg', 'get', 'name']);
    expect(stdout.trim()).toBe('"kb-document-service"');
    expect(stderr).not.toMatch(/Unknown (project|env|user) config/);
  });
});
