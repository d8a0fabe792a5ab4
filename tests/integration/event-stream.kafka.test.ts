import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../core/config/config.ts';
import { createKafkaMessageLog } from '../../core/ports/message-log/kafka.adapter.ts';
import { describeEventStreamService } from '../support/event-stream-service-behaviour.ts';

/** The event stream service over Kafka: one consumer for every stream, resumes, the per-key cap. */
const config = loadConfig();
if (config.runtime !== 'distributed' || config.schemaRegistryUrl === null) {
  throw new Error(
    'The Kafka event-stream tests need KB_RUNTIME=distributed, KB_KAFKA_BROKERS and KB_SCHEMA_REGISTRY_URL: ' +
      'start the engines with deploy/native/up kafka schema-registry and load eval "$(deploy/native/env)"',
  );
}
const registry = config.schemaRegistryUrl;

describeEventStreamService('kafka', async () => ({
  log: await createKafkaMessageLog({
    brokers: config.kafka.brokers,
    clientId: `kb-test-${randomUUID().slice(0, 8)}`,
    schemaRegistryUrl: registry.replace(/\/+$/, ''),
    sessionTimeoutMs: 10_000,
    heartbeatIntervalMs: 1_000,
    logger: { warn() {}, error: (obj, msg) => console.error(`[kafka test] ${msg ?? ''} ${JSON.stringify(obj)}`) },
  }),
  async cleanup() {},
}));
