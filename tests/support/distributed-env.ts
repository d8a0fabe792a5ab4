/**
 * Isolated names on the shared native engines for one distributed test run: a topic prefix,
 * an OpenSearch index prefix, a ClickHouse database and a bucket, all random, plus a cleanup
 * that removes them. Engine addresses come from the one config module.
 */
import { randomBytes } from 'node:crypto';
import { Client as MinioClient } from 'minio';
import { type Config, loadConfig } from '../../pipeline/config/config.ts';
import { topicSpecs } from '../../pipeline/events/events.ts';

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
      const { createKafkaMessageLog } = await import('../../pipeline/ports/message-log/kafka.adapter.ts');
      const tasks: Array<Promise<unknown>> = [];
      tasks.push(
        (async () => {
          const log = await createKafkaMessageLog({
            brokers: config.kafka.brokers,
            clientId: 'kb-e2e-cleanup',
            schemaRegistryUrl: config.schemaRegistryUrl as string,
          });
          try {
            await log.deleteTopics(topicSpecs(config.topicPrefix, 1).map((t) => t.name));
          } finally {
            await log.close();
          }
        })(),
      );
      tasks.push(fetch(`${config.opensearch.url}/${config.opensearch.indexPrefix}-*`, { method: 'DELETE' }));
      tasks.push(
        fetch(`${config.clickhouse.url}/`, {
          method: 'POST',
          body: `DROP DATABASE IF EXISTS ${config.clickhouse.database}`,
          headers: {
            'X-ClickHouse-User': config.clickhouse.user,
            'X-ClickHouse-Key': config.clickhouse.password,
          },
        }),
      );
      tasks.push(
        (async () => {
          const endpoint = new URL(config.s3.endpoint as string);
          const minio = new MinioClient({
            endPoint: endpoint.hostname,
            port: Number(endpoint.port),
            useSSL: endpoint.protocol === 'https:',
            accessKey: config.s3.accessKey,
            secretKey: config.s3.secretKey,
            region: config.s3.region,
          });
          if (!(await minio.bucketExists(config.s3.bucket))) return;
          const names: string[] = [];
          for await (const item of minio.listObjectsV2(config.s3.bucket, '', true)) {
            if (item.name) names.push(item.name);
          }
          if (names.length > 0) await minio.removeObjects(config.s3.bucket, names);
          await minio.removeBucket(config.s3.bucket);
        })(),
      );
      await Promise.allSettled(tasks);
    },
  };
}
