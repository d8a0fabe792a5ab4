/**
 * A real Prometheus server for tests: scrapes the given targets every second from a scratch
 * storage folder and answers instant queries through its HTTP API.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../support/ports.ts';

export interface ScrapeTarget {
  readonly job: string;
  /** `host:port` */
  readonly address: string;
  readonly bearerToken?: string;
}

export interface PrometheusServer {
  readonly url: string;
  /** Instant query: each series' labels and value. */
  query(expr: string): Promise<Array<{ labels: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
}

/** The Prometheus binary (`KB_TEST_PROMETHEUS` or `prometheus` on PATH), or null. */
export function prometheusBinary(): string | null {
  const candidate = process.env.KB_TEST_PROMETHEUS ?? 'prometheus';
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? candidate : null;
}

export async function startPrometheus(binary: string, targets: readonly ScrapeTarget[]): Promise<PrometheusServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-prometheus-'));
  const lines = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', 'scrape_configs:'];
  for (const target of targets) {
    lines.push(`  - job_name: ${JSON.stringify(target.job)}`);
    if (target.bearerToken)
      lines.push('    authorization:', `      credentials: ${JSON.stringify(target.bearerToken)}`);
    lines.push('    static_configs:', `      - targets: [${JSON.stringify(target.address)}]`);
  }
  const configFile = path.join(dir, 'prometheus.yml');
  await writeFile(configFile, `${lines.join('\n')}\n`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited early:\n${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus did not get ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error}`);
      return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
