/**
 * `kb` as a child process, for tests and benchmarks: run a command to completion, or start a
 * service on a free port and stop it; temporary data directories.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';

const run = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const KB_BIN = path.join(REPO_ROOT, 'bin', 'kb.js');

/**
 * Runs `kb …` to completion with the given environment; returns stdout. A command still running
 * after `timeoutMs` is killed and the error names it with what it printed.
 */
export async function kb(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [KB_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    return stdout;
  } catch (error) {
    const e = error as { killed?: boolean; stdout?: string; stderr?: string };
    if (!e.killed) throw error;
    throw new Error(
      `kb ${args.join(' ')} was still running after ${timeoutMs} ms:\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
  }
}

/** Runs `kb …` to completion; resolves its exit code and output whatever the code (for tests of failures). */
export async function kbResult(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [KB_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** What `kb keys create --json` prints. */
export interface CreatedKey {
  readonly id: string;
  readonly key: string;
  readonly prefix: string;
  readonly permissions: string[];
  readonly plan: string;
}

/** Creates an API key with `kb keys create … --json` (`permissions` comma-separated; the plan only when given). */
export async function createKey(
  env: Record<string, string>,
  request: { workspace: string; name: string; permissions: string; plan?: string },
): Promise<CreatedKey> {
  const plan = request.plan === undefined ? [] : ['--plan', request.plan];
  const args = ['--workspace', request.workspace, '--name', request.name, '--permissions', request.permissions];
  return JSON.parse(await kb(['keys', 'create', ...args, ...plan, '--json'], env)) as CreatedKey;
}

export interface ChildService {
  readonly url: string;
  readonly process: ChildProcess;
  output(): string;
  /** Resolves when the process exited. */
  exited: Promise<number | null>;
}

/** Starts `kb <args>` as a child process and waits until `GET /health/live` answers (when it serves HTTP). */
export async function startChild(
  args: string[],
  env: Record<string, string>,
  options: { waitForHttp?: boolean; timeoutMs?: number } = {},
): Promise<ChildService> {
  const port = env.PORT ?? String(await freePort());
  const child = spawn(process.execPath, [KB_BIN, ...args], {
    cwd: REPO_ROOT,
    // Workers serve metrics on 9464 unless told otherwise; tests run several at once.
    env: {
      ...process.env,
      KB_LOG_LEVEL: 'warn',
      ...(args[0] === 'worker' ? { KB_METRICS_PORT: '0' } : {}),
      ...env,
      PORT: port,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  if (options.waitForHttp !== false) {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`kb ${args.join(' ')} exited early:\n${output}`);
      try {
        const response = await fetch(`${url}/health/live`, { signal: AbortSignal.timeout(5000) });
        if (response.ok) break;
      } catch {
        // not listening yet (or not answering yet)
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`kb ${args.join(' ')} did not answer within the deadline:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { url, process: child, output: () => output, exited };
}

export async function stopChild(child: ChildService, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill(signal);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 15_000);
  await child.exited;
  clearTimeout(timer);
}

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Polls a document until its status is one of `statuses`. */
export async function waitForDocument(
  url: string,
  key: string,
  id: string,
  statuses: readonly string[] = ['completed'],
  timeoutMs = 120_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${url}/api/v1/documents/${id}`, { headers: { 'X-API-Key': key } });
    const body = (await response.json()) as Record<string, unknown>;
    if (statuses.includes(String(body.status))) return body;
    if (Date.now() > deadline) throw new Error(`document ${id} stayed ${String(body.status)}: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
