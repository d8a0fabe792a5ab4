import type { DistributedConfig } from '../config/config.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { retryStartUp } from '../util/start-up-retry.ts';
import { type Ports, withLazyParts } from './runtime-ports.ts';

/**
 * The distributed runtime: Kafka + schema registry, S3/MinIO, OpenSearch, ClickHouse. Adapters
 * are imported on demand so the embedded runtime never loads their clients. The engine URLs are
 * set: `loadConfig` only returns a distributed configuration that has them all.
 */
export async function createDistributedPorts(
  config: DistributedConfig,
  embeddings?: EmbeddingProvider,
): Promise<Ports> {
  const [
    { createKafkaMessageLog },
    { createS3ObjectStore },
    { createOpenSearchDocumentStore },
    { createClickHouseAccountStore },
    { createOpenSearchSourceStore },
    { createClickHouseWebhookStore },
    { createOpenSearchIdempotencyStore },
  ] = await Promise.all([
    import('../ports/message-log/kafka.adapter.ts'),
    import('../ports/object-store/s3.adapter.ts'),
    import('../ports/document-store/opensearch.adapter.ts'),
    import('../ports/account-store/clickhouse.adapter.ts'),
    import('../ports/source-store/opensearch.adapter.ts'),
    import('../ports/webhook-store/clickhouse.adapter.ts'),
    import('../ports/idempotency-store/opensearch.adapter.ts'),
  ]);
  // Each step is idempotent (created if missing, kept if there), so any number of processes may
  // start at once; an engine still starting is waited for within KB_STARTUP_TIMEOUT_MS.
  const opened: Array<{ close(): Promise<void> }> = [];
  const open = async <T extends { close(): Promise<void> }>(engine: string, step: string, create: () => Promise<T>) => {
    const adapter = await retryStartUp(engine, step, create, { boundMs: config.startupTimeoutMs });
    opened.push(adapter);
    return adapter;
  };
  try {
    const objects = await open('S3', `open bucket ${config.s3.bucket}`, () =>
      createS3ObjectStore({
        endpoint: config.s3.endpoint,
        accessKey: config.s3.accessKey,
        secretKey: config.s3.secretKey,
        region: config.s3.region,
        bucket: config.s3.bucket,
      }),
    );
    const log = await open('Kafka', 'create its client', () =>
      createKafkaMessageLog({
        brokers: config.kafka.brokers,
        clientId: config.kafka.clientId,
        partitionsConsumedConcurrently: config.kafka.partitionConcurrency,
        keysConsumedConcurrently: config.kafka.keyConcurrency,
        commitIntervalMs: config.kafka.commitIntervalMs,
        minFetchBytes: config.kafka.minFetchBytes,
        maxWaitTimeMs: config.kafka.fetchMaxWaitMs,
        schemaRegistryUrl: config.schemaRegistryUrl,
      }),
    );
    const documents = await open('OpenSearch', `create or update the indexes ${config.opensearch.indexPrefix}-*`, () =>
      createOpenSearchDocumentStore({
        url: config.opensearch.url,
        indexPrefix: config.opensearch.indexPrefix,
        efSearch: config.opensearch.efSearch,
        shards: config.opensearch.shards,
        replicas: config.opensearch.replicas,
        changePollMs: config.opensearch.changePollMs,
        documentsRefreshMs: config.opensearch.documentsRefreshMs,
      }),
    );
    const accountStore = await open('ClickHouse', `migrate database ${config.clickhouse.database}`, () =>
      createClickHouseAccountStore({
        url: config.clickhouse.url,
        user: config.clickhouse.user,
        password: config.clickhouse.password,
        database: config.clickhouse.database,
        auditBuffer: { flushMs: config.clickhouse.auditFlushMs },
      }),
    );
    const sources = await open('OpenSearch', `create the indexes ${config.opensearch.indexPrefix}-source*`, () =>
      createOpenSearchSourceStore({ url: config.opensearch.url, indexPrefix: config.opensearch.indexPrefix }),
    );
    const webhooks = await open('ClickHouse', `create the webhook tables in ${config.clickhouse.database}`, () =>
      createClickHouseWebhookStore({
        url: config.clickhouse.url,
        user: config.clickhouse.user,
        password: config.clickhouse.password,
        database: config.clickhouse.database,
      }),
    );
    // OpenSearch: the atomic claim of a key needs a create-if-absent, which ClickHouse lacks.
    const idempotency = await open(
      'OpenSearch',
      `create the index ${config.opensearch.indexPrefix}-idempotency-keys`,
      () =>
        createOpenSearchIdempotencyStore({ url: config.opensearch.url, indexPrefix: config.opensearch.indexPrefix }),
    );
    return withLazyParts(
      config,
      { objects, log, logAdmin: log, logTail: log, documents, accountStore, sources, webhooks, idempotency },
      embeddings,
    );
  } catch (error) {
    await Promise.allSettled(opened.map((adapter) => adapter.close()));
    throw error;
  }
}
