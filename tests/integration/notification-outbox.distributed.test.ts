/**
 * Deletions and purges answered while Kafka refused their notifications, on the distributed
 * runtime (Kafka, OpenSearch, ClickHouse, S3; both services on the same names): see
 * `tests/support/notification-outbox-behaviour.ts`.
 */
import { distributedEnv } from '../support/distributed-env.ts';
import { describeNotificationOutbox } from '../support/notification-outbox-behaviour.ts';

describeNotificationOutbox('distributed', distributedEnv, 180_000);
