import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { describeShutdown } from '../support/shutdown-behaviour.ts';

/** Signals to `kb serve --stages all` on Kafka, MinIO, OpenSearch and ClickHouse. */
const setups: DistributedEnv[] = [];
describeShutdown(
  () => {
    const setup = distributedEnv();
    setups.push(setup);
    return { ...setup.env, KB_LOG_LEVEL: 'warn' };
  },
  async () => {
    await Promise.allSettled(setups.map((s) => s.cleanup()));
  },
);
