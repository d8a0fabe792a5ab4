import type { Admin, Consumer, Producer, RequestEvent, RequestTimeoutEvent } from 'kafkajs';
import { countEngineRequest } from '../../util/engine-requests.ts';

const count = (event: RequestEvent | RequestTimeoutEvent) => countEngineRequest('kafka', event.payload.apiName);

/**
 * Counts every request a kafkajs client sends, by its protocol name (`Produce`, `Fetch`,
 * `OffsetCommit`, `Heartbeat`, `Metadata`, …), from the client's own instrumentation events,
 * which fire once per request answered or timed out.
 */
export function countKafkaRequests(
  client:
    | { kind: 'admin'; admin: Admin }
    | { kind: 'producer'; producer: Producer }
    | { kind: 'consumer'; consumer: Consumer },
): void {
  if (client.kind === 'admin') {
    client.admin.on(client.admin.events.REQUEST, count);
    client.admin.on(client.admin.events.REQUEST_TIMEOUT, count);
  } else if (client.kind === 'producer') {
    client.producer.on(client.producer.events.REQUEST, count);
    client.producer.on(client.producer.events.REQUEST_TIMEOUT, count);
  } else {
    client.consumer.on(client.consumer.events.REQUEST, count);
    client.consumer.on(client.consumer.events.REQUEST_TIMEOUT, count);
  }
}
