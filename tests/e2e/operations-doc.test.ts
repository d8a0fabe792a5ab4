import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

/** The systemd unit docs/operations.md gives, run as systemd would run it: start, then its KillSignal. */
describe('the systemd unit of docs/operations.md', { timeout: 180_000 }, () => {
  const cleanups = cleanupsAfterAll();

  it('starts the service with its ExecStart, and its KillSignal stops it cleanly', async () => {
    const doc = await readFile(path.join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
    const setting = (name: string) => new RegExp(`^${name}=(.+)$`, 'm').exec(doc)?.[1]?.trim();
    const execStart = setting('ExecStart')?.split(/\s+/) ?? [];
    expect(execStart.slice(1)).toEqual(['bin/kb.js', 'serve']);
    const signal = setting('KillSignal') as NodeJS.Signals;
    expect(signal).toBe('SIGTERM');
    // The stop timeout leaves the shutdown its grace (KB_SHUTDOWN_GRACE_MS, 10 s).
    expect(Number(setting('TimeoutStopSec'))).toBeGreaterThan(10);

    const data = await tempDir('kb-unit-');
    cleanups.push(data.remove);
    const port = await freePort();
    const env = { ...process.env, KB_DATA_DIR: path.join(data.path, 'kb'), HOST: '127.0.0.1', PORT: String(port) };
    const service = spawn(process.execPath, execStart.slice(1), { cwd: REPO_ROOT, env, stdio: 'ignore' });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      service.on('exit', (code, sig) => resolve({ code, signal: sig })),
    );
    cleanups.push(async () => {
      if (service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
    });
    for (;;) {
      const live = await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null);
      if (live?.ok) break;
      if (service.exitCode !== null) throw new Error(`the service exited with ${service.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    service.kill(signal);
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
