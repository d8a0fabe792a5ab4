/**
 * A peer server of a benchmark row (bench/peers/): started in a process of its own, it prints
 * the port it listens on as its first line; TypeScript peers run through tsx.
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../../support/child-service.ts';

export interface PeerServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts `script` with `env` added to this process's environment; resolves once it printed its port. */
export async function startPeerServer(script: string, env: Record<string, string> = {}): Promise<PeerServer> {
  const args = script.endsWith('.ts') ? ['--import', 'tsx', script] : [script];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code, signal) => reject(new Error(`the peer ${script} exited (${code ?? signal})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    async stop() {
      child.kill();
      await exited;
    },
  };
}
