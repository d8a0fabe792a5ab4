import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/child-service.ts';

const run = promisify(execFile);
const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'cli', 'failing-command.ts');

async function failing(how: string): Promise<{ code: number; stderr: string; ms: number }> {
  const started = Date.now();
  try {
    await run(process.execPath, ['--import', 'tsx', FIXTURE, how], { cwd: REPO_ROOT, timeout: 60_000 });
    return { code: 0, stderr: '', ms: Date.now() - started };
  } catch (error) {
    const e = error as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '', ms: Date.now() - started };
  }
}

describe('a kb command that fails says why on stderr, whatever the cause', { timeout: 120_000 }, () => {
  it('an unhandled rejection with an empty error: exit 1 and a line on stderr, despite an open handle', async () => {
    const result = await failing('reject-empty');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^kb: failed without saying why \(an empty error was thrown\)\n$/);
  });

  it('an uncaught exception from a timer: exit 1 and its code on stderr', async () => {
    const result = await failing('throw-later');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('kb: error (code ECONNRESET)\n');
  });

  it('an exit status 1 with nothing said: the status is named', async () => {
    const result = await failing('silent-exit');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/exited with status 1 without a message/);
  });
});
