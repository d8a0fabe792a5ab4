import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';

const run = promisify(execFile);

/** Runs `npm run bench|eval -- <args>` as the script itself; resolves its exit code and output. */
async function script(name: 'bench' | 'eval', args: string[]) {
  const file = path.join(REPO_ROOT, name, `run.${name}.ts`);
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', file, ...args], { cwd: REPO_ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('npm run bench and npm run eval on the command line', { timeout: 120_000 }, () => {
  it('print their usage on --help and exit 0 without running anything', async () => {
    const bench = await script('bench', ['--help']);
    expect(bench.code).toBe(0);
    expect(bench.stdout).toContain('Usage: npm run bench -- [options]');
    for (const scenario of ['ingest', 'overhead', 'upload', 'search', 'vector-index', 'api', 'scale-out']) {
      expect(bench.stdout).toContain(scenario);
    }
    const evaluation = await script('eval', ['--help']);
    expect(evaluation.code).toBe(0);
    expect(evaluation.stdout).toContain('Usage: npm run eval -- --beir <folder>');
  });

  it('answer a mistake in the options with one line and the usage, exit 2, no stack trace', async () => {
    for (const [args, message] of [
      [['--bogus'], "npm run bench: Unknown option '--bogus'"],
      [['--only', 'searches'], 'npm run bench: Unknown scenario searches; choose from'],
      [['--rounds', 'x'], 'npm run bench: --rounds: expected a positive whole number, got "x"'],
      [['--runtime', 'cloud'], 'npm run bench: --runtime: embedded | distributed | both'],
    ] as const) {
      const result = await script('bench', [...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain('Usage: npm run bench');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
