import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KB_BIN, kbResult, REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

const kb = kbResult;

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

  it('exits 2 for a command line it cannot use, saying what was wrong before the usage', async () => {
    const data = await tempDir('kb-usage-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: data.path };
    const key = ['keys', 'create', '--workspace', 'w', '--name', 'n'];
    const user = ['users', 'create', '--workspace', 'w'];
    const cases: Array<{ args: string[]; says: RegExp }> = [
      { args: [...key, '--permissions', 'read', '--plan', 'gold'], says: /--plan must be one of/ },
      { args: [...key, '--permissions', 'read,admin'], says: /Permissions must be a non-empty subset/ },
      { args: [...user, '--email', 'a@example.com', '--role', 'admin'], says: /--role must be one of/ },
      { args: [...user, '--email', 'notanemail'], says: /email/i },
      { args: ['keys', 'frob'], says: /kb keys: unknown action "frob"/ },
      { args: ['users', 'frob'], says: /kb users: unknown action "frob"/ },
      { args: ['keys'], says: /kb keys: name an action/ },
      { args: ['retention', 'frob'], says: /kb retention: unknown action "frob"/ },
      { args: [], says: /Usage: kb <command>/ },
    ];
    const results = await Promise.all(cases.map((c) => kb(c.args, env)));
    cases.forEach((c, i) => {
      const result = results[i] as Awaited<ReturnType<typeof kb>>;
      const name = `kb ${c.args.join(' ')}`;
      expect(result.code, `${name}: ${result.stderr}`).toBe(2);
      expect(result.stderr, name).toMatch(c.says);
      expect(result.stderr, name).toContain('Usage: kb');
      expect(result.stdout, name).toBe('');
      if (c.args.length > 0) {
        expect(result.stderr.search(c.says), name).toBeLessThan(result.stderr.indexOf('Usage:'));
      }
    });
  });
});
