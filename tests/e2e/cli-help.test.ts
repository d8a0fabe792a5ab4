import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../apps/cli/commands/command-registry.js';
import { INGEST_EXTENSIONS } from '../../apps/cli/commands/ingest-files.ts';
import { KB_BIN, kbResult, REPO_ROOT } from '../../support/child-service.ts';

const kb = kbResult;
const REFUSE_TYPESCRIPT = path.join(REPO_ROOT, 'tests', 'fixtures', 'cli', 'refuse-typescript.mjs');

/** Runs `kb …` in a process where loading any TypeScript module or tsx fails. */
async function kbWithoutTypeScript(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', REFUSE_TYPESCRIPT, KB_BIN, ...args],
      { cwd: REPO_ROOT },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// Each case starts a few `kb` processes; on a busy machine one can take seconds.
describe('kb help', { timeout: 180_000 }, () => {
  it('refuses to start with an invalid variable, naming it, with exit 1', async () => {
    const result = await kb(['serve'], { PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('kb: Invalid configuration:\n  - PORT: "eighty" is not an integer');
  });

  it('answers --help on every command with its usage and exit 0, without touching any data', async () => {
    const names = Object.keys(COMMANDS);
    const results = await Promise.all(names.map((name) => kb([name, '--help'])));
    names.forEach((name, i) => {
      const result = results[i] as Awaited<ReturnType<typeof kb>>;
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: kb ${name}`);
    });
  });

  it('answers help, the version and an unknown command without loading the application or its TypeScript loader', async () => {
    const cases = [['--help'], ['help', 'ingest'], ['ingest', '--help'], ['keys', 'create', '-h'], ['--version']];
    const results = await Promise.all(cases.map((args) => kbWithoutTypeScript(args)));
    cases.forEach((args, i) => {
      const result = results[i] as Awaited<ReturnType<typeof kb>>;
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stderr, args.join(' ')).toBe('');
    });
    expect(results[0]?.stdout).toContain('Usage: kb <command>');
    expect(results[1]?.stdout).toContain('Usage: kb ingest');
    expect(results[3]?.stdout).toContain('Usage: kb keys create');
    const unknown = await kbWithoutTypeScript(['nonsense']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('kb: unknown command "nonsense"');
    // The refusal is real: the same process fails as soon as it loads the TypeScript loader (as a
    // command does when the prebuilt JavaScript is missing or older than the sources).
    const loading = await promisify(execFile)(
      process.execPath,
      ['--import', REFUSE_TYPESCRIPT, '--input-type=module', '--eval', "await import('tsx/esm/api')"],
      { cwd: REPO_ROOT },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? '' }),
    );
    expect(loading.code).not.toBe(0);
    expect(loading.stderr).toMatch(/refused to load tsx/);
  });

  it('loads every command it lists, and the help of ingest names every format it uploads', async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const command = await entry.load();
      expect(typeof command.run, name).toBe('function');
    }
    for (const extension of INGEST_EXTENSIONS) expect(COMMANDS.ingest?.usage).toContain(` ${extension} `);
  });

  it('answers --help after a subcommand too, and the help of every command lists --json where it prints a result', async () => {
    const subcommands = [
      ['keys', 'create', '--help'],
      ['keys', 'revoke', '-h'],
      ['schemas', 'register', '--help'],
      ['retention', 'run', '--help'],
      ['models', 'fetch', '--help'],
      ['worker', '--stages', 'parse', '--help'],
    ];
    const results = await Promise.all(subcommands.map((args) => kb(args)));
    subcommands.forEach((args, i) => {
      const result = results[i] as Awaited<ReturnType<typeof kb>>;
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: kb ${args[0]}`);
    });
    const printing = ['keys', 'ingest', 'search', 'sources', 'schemas', 'reindex', 'retention', 'config', 'models'];
    const helps = await Promise.all(printing.map((name) => kb(['help', name])));
    printing.forEach((name, i) => {
      expect(helps[i]?.stdout, name).toContain('--json');
    });
  });

  it('prints the configuration as JSON with --json', async () => {
    const result = await kb(['config', '--json']);
    expect(result.code).toBe(0);
    const variables = JSON.parse(result.stdout) as Array<{ name: string; default: string }>;
    expect(variables.find((v) => v.name === 'KB_METRICS_PORT')).toMatchObject({ default: '' });
    expect(variables.length).toBeGreaterThan(50);
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
