import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { blocksUnder, shownPattern, stepsOf } from '../support/readme-blocks.ts';

/**
 * The README's Quick start (with "Versions and time") as a newcomer pastes it, in order, against a
 * fresh data directory: `npm start` in the checkout (the checkout is installed already, so the
 * `npm install` before it is not run again), its first-start output checked against what the README
 * shows, then every API command in a fresh empty folder, each command's output checked against the
 * output the README shows after it. The only changes to the commands: the service's port (a free one
 * instead of 8080) and the key the service printed in place of `ink_…`.
 */
describe('README Quick start', { timeout: 300_000 }, () => {
  const cleanups = cleanupsAfterAll();

  it('runs as pasted and prints what the README shows', async () => {
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const [start, startOutput, api, versions, ...rest] = blocksUnder(readme, '## Quick start');
    expect(rest).toEqual([]);
    expect(start).toEqual({ lang: 'bash', text: 'npm install && npm start' });
    expect(startOutput?.lang).toBe('');
    expect(api?.lang).toBe('bash');
    expect(versions).toEqual(blocksUnder(readme, '### Versions and time')[0]);

    const home = await tempDir('kb-readme-');
    cleanups.push(home.remove);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const shell = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && !name.startsWith('KB_')),
    );
    const env = { ...shell, KB_DATA_DIR: path.join(home.path, 'data'), PORT: String(port) };

    // `npm start`, as the README runs it after `npm install`.
    const npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => stop(npm));
    let stdout = '';
    let stderr = '';
    npm.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    npm.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 120_000;
    while (!/Server listening at [^\n]*\n/.test(stdout)) {
      if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${stdout}\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`npm start did not listen:\n${stdout}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    // Its output: every line the README shows, on stdout (the model line is on stderr). In order,
    // except the server's own log line: the logger writes asynchronously, so it may come first.
    const outLines = stdout.split('\n');
    let at = 0;
    for (const shown of (startOutput?.text ?? '').split('\n').filter((l) => l.trim() !== '')) {
      const pattern = shownPattern(shown.replaceAll(':8080', `:${port}`));
      const logLine = shown.startsWith('{"level"');
      const found = outLines.findIndex((line, i) => (logLine || i >= at) && pattern.test(line));
      if (found >= 0) {
        if (!logLine) at = found + 1;
        continue;
      }
      expect(
        stderr.split('\n').some((line) => pattern.test(line)),
        `npm start printed no line like: ${shown}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
      ).toBe(true);
    }
    const key = /Try: {2}export KB_KEY=(ink_\S+)/.exec(stdout)?.[1];
    expect(key).toBeDefined();

    // The API commands, pasted in order into one shell in an empty folder.
    const steps = [...stepsOf(api?.text ?? ''), ...stepsOf(versions?.text ?? '')];
    expect(steps.length).toBeGreaterThan(15);
    const adapted = steps.map((step) =>
      step.command.replaceAll('http://127.0.0.1:8080', url).replace(/^export KB_KEY=ink_….*$/, `export KB_KEY=${key}`),
    );
    expect(adapted.filter((c) => c.includes('127.0.0.1:8080') || c.includes('ink_…'))).toEqual([]);
    const script = adapted.map((command, i) => `${command}\necho "@@step ${i}@@"`).join('\n');
    const work = await tempDir('kb-readme-folder-');
    cleanups.push(work.remove);
    const ran = await runBash(script, work.path, env);
    expect(ran.code, ran.stderr).toBe(0);

    const outputs = ran.stdout.split(/@@step \d+@@\n/);
    expect(outputs).toHaveLength(steps.length + 1);
    steps.forEach((step, i) => {
      const lines = (outputs[i] ?? '').split('\n');
      for (const shown of step.shown) {
        expect(
          lines.some((line) => shownPattern(shown).test(line.trim())),
          `${step.command}\nprinted:\n${outputs[i]}\nnot a line like:\n${shown}`,
        ).toBe(true);
      }
    });
    expect(steps.filter((s) => s.shown.length > 0).length).toBeGreaterThanOrEqual(8);
  });
});

function runBash(
  script: string,
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const bash = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    bash.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    bash.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => bash.kill('SIGKILL'), 180_000);
    bash.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
