/**
 * Isolated names on the shared native engines for one distributed test run: a topic prefix,
 * an OpenSearch index prefix, a ClickHouse database and a bucket, all random, plus a cleanup
 * that removes them. Engine addresses come from the one config module.
 */
import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../../core/config/config.ts';
import { wipeDistributed } from '../../support/distributed-wipe.ts';

export interface DistributedEnv {
  readonly config: Config;
  /** Variables for child processes (`kb serve`, `kb worker`, `kb keys`). */
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

export function distributedEnv(): DistributedEnv {
  const base = loadConfig();
  if (base.runtime !== 'distributed') {
    throw new Error(
      'The integration suite runs against the native engines: start them with deploy/native/up and run eval "$(deploy/native/env)" first.',
    );
  }
  const id = randomBytes(4).toString('hex');
  const env: Record<string, string> = {
    KB_RUNTIME: 'distributed',
    KB_TOPIC_PREFIX: `t${id}.`,
    KB_OPENSEARCH_INDEX_PREFIX: `kbe2e-${id}`,
    KB_CLICKHOUSE_DATABASE: `kbe2e_${id}`,
    KB_S3_BUCKET: `kbe2e-${id}`,
    KB_KAFKA_PARTITIONS: '4',
    KB_KAFKA_BROKERS: base.kafka.brokers.join(','),
    KB_SCHEMA_REGISTRY_URL: base.schemaRegistryUrl ?? '',
    KB_S3_ENDPOINT: base.s3.endpoint ?? '',
    KB_S3_ACCESS_KEY: base.s3.accessKey,
    KB_S3_SECRET_KEY: base.s3.secretKey,
    KB_S3_REGION: base.s3.region,
    KB_OPENSEARCH_URL: base.opensearch.url ?? '',
    KB_CLICKHOUSE_URL: base.clickhouse.url ?? '',
    KB_CLICKHOUSE_USER: base.clickhouse.user,
    KB_CLICKHOUSE_PASSWORD: base.clickhouse.password,
    KB_BOOTSTRAP_KEY: 'false',
    KB_LOG_LEVEL: 'warn',
    KB_KEY_CACHE_MS: '1000',
    KB_RATE_LIMIT_SYNC_MS: '250',
  };
  const config = loadConfig(env);
  return {
    config,
    env,
    async cleanup() {
      await wipeDistributed(config, 'kb-e2e-cleanup');
    },
  };
}
