import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { describeFairIngestion } from '../support/fair-ingestion.ts';

/**
 * Fair scheduling, progress and cancellation on Kafka, MinIO, OpenSearch and ClickHouse. Every stage
 * hop costs more here (a Kafka round trip, OpenSearch writes with refresh), so the bound on a small
 * document is wider than on the embedded runtime; the large document still takes minutes.
 */
let setup: DistributedEnv | undefined;
describeFairIngestion(
  () => {
    setup = distributedEnv();
    return setup.env;
  },
  60_000,
  async () => {
    await setup?.cleanup();
  },
);
