import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

/** `npm start` as a process manager runs it: SIGTERM goes to npm's process alone, not to its group. */
describe('npm start', { timeout: 180_000 }, () => {
  const cleanups = cleanupsAfterAll();

  it('passes SIGTERM on to the service, which stops; nothing is left running', async () => {
    const data = await tempDir('kb-npm-start-');
    cleanups.push(data.remove);
    const port = await freePort();
    const shell = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
    const env = { ...shell, KB_DATA_DIR: path.join(data.path, 'data'), PORT: String(port), KB_LOG_LEVEL: 'warn' };
    const npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env, stdio: 'ignore' });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const url = `http://127.0.0.1:${port}/health/live`;
    cleanups.push(async () => {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    });
    for (;;) {
      if ((await fetch(url).catch(() => null))?.ok) break;
      if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    npm.kill('SIGTERM');
    // npm waits for the service it passed the signal to, then ends with its exit code.
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await fetch(url).catch(() => 'refused')).toBe('refused');
  });
});
