import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../apps/cli/commands/index.ts';
import { KB_BIN, REPO_ROOT } from '../support/child-service.ts';

const run = promisify(execFile);

/** Runs `kb` with `args`; resolves its exit code and output, whatever the code. */
async function kb(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [KB_BIN, ...args], { cwd: REPO_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('kb help', () => {
  it('answers --help on every command with its usage and exit 0, without touching any data', async () => {
    for (const name of Object.keys(COMMANDS)) {
      const result = await kb([name, '--help']);
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: kb ${name}`);
    }
  });

  it('prints the version and the help of a named command', async () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((await kb(['--version'])).stdout.trim()).toBe(`kb-document-service ${version}`);
    const help = await kb(['help', 'reindex']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: kb reindex');
    expect((await kb(['help', 'nonsense'])).code).toBe(2);
  });

  it('answers an unknown option with the usage and the option it probably meant', async () => {
    const result = await kb(['keys', 'list', '--workspac', 'team-a']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown option '--workspac'. Did you mean --workspace?");
    expect(result.stderr).toContain('Usage: kb keys');
  });
});
