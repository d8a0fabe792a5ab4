/**
 * The runtimes a benchmark runs against. Every scenario round gets a fresh, isolated instance:
 * embedded, a new temporary data directory; distributed, its own topic prefix, OpenSearch index
 * prefix, ClickHouse database and bucket on the shared engines, removed afterwards.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as sqliteVec from 'sqlite-vec';
import { type Config, type DistributedConfig, loadConfig } from '../../core/config/config.ts';
import { openDatabase } from '../../core/ports/sqlite/open-database.ts';
import { wipeDistributed } from '../../support/distributed-wipe.ts';
import type { RuntimeName } from './report.ts';

const run = promisify(execFile);
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Instance {
  readonly runtime: RuntimeName;
  readonly config: Config;
  /** Variables that point a `kb serve` / `kb worker` child process at this instance. */
  readonly env: Record<string, string>;
  /** Removes everything the instance stored. */
  cleanup(): Promise<void>;
}

export interface Target {
  readonly runtime: RuntimeName;
  fresh(): Promise<Instance>;
  /** Engine versions, for the report. */
  readonly versions: Record<string, string>;
}

/** Settings every benchmark instance shares: quiet logs, loopback, a free port. */
function benchConfig(config: Config): Config {
  return { ...config, host: '127.0.0.1', port: 0, logLevel: 'silent', bootstrapKey: false };
}

/** SQLite and sqlite-vec versions as the embedded store loads them. */
function sqliteVersions(): Record<string, string> {
  const db = openDatabase(':memory:');
  try {
    sqliteVec.load(db);
    const row = db.prepare('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get() as {
      sqlite: string;
      vec: string;
    };
    return { sqlite: row.sqlite, 'sqlite-vec': row.vec };
  } finally {
    db.close();
  }
}

export function embeddedTarget(base: Config): Target {
  return {
    runtime: 'embedded',
    versions: sqliteVersions(),
    async fresh() {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-bench-'));
      return {
        runtime: 'embedded',
        config: { ...benchConfig(base), runtime: 'embedded', dataDir },
        env: { KB_RUNTIME: 'embedded', KB_DATA_DIR: dataDir },
        cleanup: () => rm(dataDir, { recursive: true, force: true }),
      };
    },
  };
}

/** Reads `export NAME=value` lines as printed by `deploy/native/env`. */
function parseExports(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match) vars[match[1] as string] = (match[2] as string).replace(/^(['"])(.*)\1$/, '$2');
  }
  return vars;
}

async function probe(url: string, headers: Record<string, string> = {}): Promise<{ ok: boolean; body: string }> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(3000) });
    return { ok: response.ok, body: await response.text() };
  } catch {
    return { ok: false, body: '' };
  }
}

function probeTcp(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host: host ?? '127.0.0.1', port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(3000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const DISTRIBUTED_ADAPTERS = [
  'core/ports/message-log/kafka.adapter.ts',
  'core/ports/object-store/s3.adapter.ts',
  'core/ports/document-store/opensearch.adapter.ts',
  'core/ports/account-store/clickhouse.adapter.ts',
];

/**
 * The distributed runtime when its engines answer and its adapters load; otherwise the reason
 * it is not available. Settings come from the environment when `KB_RUNTIME=distributed`, else
 * from what `deploy/native/env` prints (both through `loadConfig`).
 */
export async function distributedTarget(base: Config): Promise<Target | { unavailable: string }> {
  let settings: DistributedConfig;
  let childEnv: Record<string, string> = {};
  if (base.runtime === 'distributed') {
    settings = base;
  } else {
    try {
      const { stdout } = await run('bash', [path.join(REPO_ROOT, 'deploy/native/env')], { timeout: 15_000 });
      childEnv = parseExports(stdout);
      const loaded = loadConfig(childEnv);
      if (loaded.runtime !== 'distributed') throw new Error('it does not set KB_RUNTIME=distributed');
      settings = loaded;
    } catch (error) {
      return {
        unavailable: `KB_RUNTIME is not distributed and deploy/native/env gave no usable settings (${firstLine(error)})`,
      };
    }
  }
  const down: string[] = [];
  const versions: Record<string, string> = {};
  const opensearch = await probe(settings.opensearch.url ?? '');
  if (opensearch.ok) {
    versions.opensearch = (JSON.parse(opensearch.body) as { version?: { number?: string } }).version?.number ?? '?';
  } else down.push(`OpenSearch at ${settings.opensearch.url}`);
  const clickhouse = await probe(`${settings.clickhouse.url}/?query=SELECT%20version()`, {
    'X-ClickHouse-User': settings.clickhouse.user,
    'X-ClickHouse-Key': settings.clickhouse.password,
  });
  if (clickhouse.ok) versions.clickhouse = clickhouse.body.trim();
  else down.push(`ClickHouse at ${settings.clickhouse.url}`);
  if (!(await probe(`${settings.s3.endpoint}/minio/health/live`)).ok) down.push(`S3 at ${settings.s3.endpoint}`);
  if (!(await probe(`${settings.schemaRegistryUrl}/subjects`)).ok) {
    down.push(`schema registry at ${settings.schemaRegistryUrl}`);
  }
  const broker = settings.kafka.brokers[0] ?? '';
  if (!(await probeTcp(broker))) down.push(`Kafka at ${broker}`);
  if (down.length > 0)
    return { unavailable: `engines not answering: ${down.join(', ')} (start them with deploy/native/up)` };

  for (const file of DISTRIBUTED_ADAPTERS) {
    try {
      await import(new URL(`../../${file}`, import.meta.url).href);
    } catch (error) {
      return { unavailable: `the distributed adapters do not load yet: ${file}: ${firstLine(error)}` };
    }
  }

  const distributed: DistributedConfig = {
    ...benchConfig(base),
    runtime: 'distributed',
    kafka: settings.kafka,
    schemaRegistryUrl: settings.schemaRegistryUrl,
    s3: settings.s3,
    opensearch: settings.opensearch,
    clickhouse: settings.clickhouse,
  };
  return {
    runtime: 'distributed',
    versions,
    async fresh() {
      const id = randomBytes(4).toString('hex');
      const config: Config = {
        ...distributed,
        topicPrefix: `bench-${id}.`,
        opensearch: { ...distributed.opensearch, indexPrefix: `bench-${id}` },
        clickhouse: { ...distributed.clickhouse, database: `bench_${id}` },
        s3: { ...distributed.s3, bucket: `bench-${id}` },
      };
      return {
        runtime: 'distributed',
        config,
        env: {
          ...childEnv,
          KB_RUNTIME: 'distributed',
          KB_TOPIC_PREFIX: config.topicPrefix,
          KB_OPENSEARCH_INDEX_PREFIX: config.opensearch.indexPrefix,
          KB_CLICKHOUSE_DATABASE: config.clickhouse.database,
          KB_S3_BUCKET: config.s3.bucket,
        },
        cleanup: () => removeDistributed(config),
      };
    },
  };
}

/** Deletes the instance's topics, indexes, database and bucket (best effort, each on its own). */
async function removeDistributed(config: Config): Promise<void> {
  const failed = await wipeDistributed(config, config.kafka.clientId);
  if (failed.length > 0) {
    console.warn(`cleanup of ${config.topicPrefix} incomplete: ${failed.map(firstLine).join('; ')}`);
  }
}

export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
