import type { Config } from '../config/config.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { type Ports, withLazyParts } from './runtime-ports.ts';

/**
 * The distributed runtime: Kafka + schema registry, S3/MinIO, OpenSearch, ClickHouse. Adapters
 * are imported on demand so the embedded runtime never loads their clients.
 */
export async function createDistributedPorts(config: Config, embeddings?: EmbeddingProvider): Promise<Ports> {
  const [
    { createKafkaMessageLog },
    { createS3ObjectStore },
    { createOpenSearchDocumentStore },
    { createClickHouseControlStore },
  ] = await Promise.all([
    import('../ports/message-log/kafka.adapter.ts'),
    import('../ports/object-store/s3.adapter.ts'),
    import('../ports/document-store/opensearch.adapter.ts'),
    import('../ports/control-store/clickhouse.adapter.ts'),
  ]);
  const required = (value: string | null, name: string): string => {
    if (!value) throw new Error(`${name} is required in the distributed runtime`);
    return value;
  };
  const objects = await createS3ObjectStore({
    endpoint: required(config.s3.endpoint, 'KB_S3_ENDPOINT'),
    accessKey: config.s3.accessKey,
    secretKey: config.s3.secretKey,
    region: config.s3.region,
    bucket: config.s3.bucket,
  });
  const log = await createKafkaMessageLog({
    brokers: config.kafka.brokers,
    clientId: config.kafka.clientId,
    partitionsConsumedConcurrently: config.kafka.partitionConcurrency,
    keysConsumedConcurrently: config.kafka.keyConcurrency,
    schemaRegistryUrl: required(config.schemaRegistryUrl, 'KB_SCHEMA_REGISTRY_URL'),
  });
  const documents = await createOpenSearchDocumentStore({
    url: required(config.opensearch.url, 'KB_OPENSEARCH_URL'),
    indexPrefix: config.opensearch.indexPrefix,
    efSearch: config.opensearch.efSearch,
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    changePollMs: config.opensearch.changePollMs,
  });
  const control = await createClickHouseControlStore({
    url: required(config.clickhouse.url, 'KB_CLICKHOUSE_URL'),
    user: config.clickhouse.user,
    password: config.clickhouse.password,
    database: config.clickhouse.database,
  });
  return withLazyParts(config, { objects, log, logAdmin: log, documents, control }, embeddings);
}
