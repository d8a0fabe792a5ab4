import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KB_BIN, REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

/** Runs `kb` with its stdout a pipe whose reader is gone before anything is written (as `| head` after its lines). */
function kbIntoClosedPipe(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [KB_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

// Each case starts a few `kb` processes; on a busy machine one can take seconds.
describe('kb exit codes', { timeout: 180_000 }, () => {
  const cleanups = cleanupsAfterAll();

  it('exits quietly with 0 when the reader of its output goes away (kb config | head)', async () => {
    const data = await tempDir('kb-pipe-');
    cleanups.push(data.remove);
    const cases = [['config'], ['config', '--markdown'], ['help'], ['keys', 'list']];
    const results = await Promise.all(cases.map((args) => kbIntoClosedPipe(args, { KB_DATA_DIR: data.path })));
    cases.forEach((args, i) => {
      expect(results[i], args.join(' ')).toEqual({ code: 0, stderr: '' });
    });
  });
});
