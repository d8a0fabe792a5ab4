import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { kbResult, REPO_ROOT } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

const run = promisify(execFile);
const READY = path.join(REPO_ROOT, 'deploy', 'native', 'ready');

let setups: DistributedEnv[] = [];
afterEach(async () => {
  await Promise.allSettled(setups.map((setup) => setup.cleanup()));
  setups = [];
});

/**
 * What `deploy/native/up` waits for before it returns: each engine's probe of the service's first
 * operations (`deploy/native/ready` runs the same probes), then at once the command that once
 * failed silently right after `up`: `kb keys create --json` on a ClickHouse database, topic
 * prefix, index prefix and bucket that do not exist yet.
 */
describe('ready means ready', () => {
  it('once the engines pass their probes, kb keys create works on fresh names at once', async () => {
    const { stdout } = await run(READY, ['kafka', 'schema-registry', 'opensearch', 'clickhouse', 'minio'], {
      timeout: 120_000,
    });
    for (const engine of ['kafka', 'schema-registry', 'opensearch', 'clickhouse', 'minio']) {
      expect(stdout).toMatch(new RegExp(`^${engine} +ready `, 'm'));
    }
    const setup = distributedEnv();
    setups.push(setup);
    const result = await kbResult(
      ['keys', 'create', '--workspace', 'ready', '--name', 'first', '--permissions', 'read,write', '--json'],
      setup.env,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const key = JSON.parse(result.stdout) as { key: string; workspace_id: string };
    expect(key.workspace_id).toBe('ready');
    expect(key.key).toMatch(/^\S{20,}$/);
  });

  it('a kb command that cannot reach an engine exits 1 and says which engine and why', async () => {
    const setup = distributedEnv();
    setups.push(setup);
    const closed = await freePort();
    const result = await kbResult(
      ['keys', 'create', '--workspace', 'w', '--name', 'n', '--permissions', 'read', '--json'],
      {
        ...setup.env,
        KB_CLICKHOUSE_URL: `http://127.0.0.1:${closed}`,
        KB_STARTUP_TIMEOUT_MS: '1500',
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^kb: ClickHouse was not ready to migrate database \S+ .*ECONNREFUSED/m);
  });
});
