/**
 * Removes what one isolated instance left on the shared distributed engines: its topics, its
 * OpenSearch indexes, its ClickHouse database and its bucket.
 */
import type { Config } from '../core/config/config.ts';
import { topicSpecs } from '../core/events/events.ts';

/**
 * Deletes the instance's topics, indexes, database and bucket, each step on its own and best
 * effort: a step that fails does not stop the others. Returns why the steps that failed did.
 */
export async function wipeDistributed(config: Config, clientId: string): Promise<unknown[]> {
  const steps: Array<() => Promise<unknown>> = [
    async () => {
      const { createKafkaMessageLog } = await import('../core/ports/message-log/kafka.adapter.ts');
      const log = await createKafkaMessageLog({
        brokers: config.kafka.brokers,
        clientId,
        schemaRegistryUrl: config.schemaRegistryUrl ?? '',
      });
      try {
        await log.deleteTopics(topicSpecs(config.topicPrefix, 1).map((t) => t.name));
      } finally {
        await log.close();
      }
    },
    async () => {
      const url = config.opensearch.url ?? '';
      const listed = await fetch(`${url}/_cat/indices/${config.opensearch.indexPrefix}-*?format=json`);
      const indexes = (await listed.json()) as Array<{ index: string }>;
      for (const { index } of indexes) await fetch(`${url}/${index}`, { method: 'DELETE' });
    },
    () =>
      fetch(`${config.clickhouse.url}/`, {
        method: 'POST',
        headers: {
          'X-ClickHouse-User': config.clickhouse.user,
          'X-ClickHouse-Key': config.clickhouse.password,
        },
        body: `DROP DATABASE IF EXISTS \`${config.clickhouse.database}\``,
      }),
    async () => {
      const { Client } = await import('minio');
      const endpoint = new URL(config.s3.endpoint ?? '');
      const client = new Client({
        endPoint: endpoint.hostname,
        port: Number(endpoint.port) || (endpoint.protocol === 'https:' ? 443 : 80),
        useSSL: endpoint.protocol === 'https:',
        accessKey: config.s3.accessKey,
        secretKey: config.s3.secretKey,
        region: config.s3.region,
      });
      if (!(await client.bucketExists(config.s3.bucket))) return;
      const names: string[] = [];
      for await (const item of client.listObjectsV2(config.s3.bucket, '', true)) {
        if (item.name) names.push(item.name);
      }
      for (let i = 0; i < names.length; i += 1000)
        await client.removeObjects(config.s3.bucket, names.slice(i, i + 1000));
      await client.removeBucket(config.s3.bucket);
    },
  ];
  const results = await Promise.allSettled(steps.map((step) => step()));
  return results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
}
