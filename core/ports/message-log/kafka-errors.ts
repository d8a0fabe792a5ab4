import { describeError } from '../../errors/describe-error.ts';
import { engineUnavailable, KbError } from '../../errors/kb-error.ts';
import { isTransientNetworkCode } from '../../errors/transient-errors.ts';

/**
 * Error mapping for the Kafka message log: kafkajs and schema-registry failures become
 * {@link KbError}s. An engine that cannot be reached, answers too late or is busy gives a retriable
 * `engine-unavailable`; a request the engine refuses for good keeps a non-retriable code.
 */

const UNAVAILABLE_KAFKA_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSTimeout',
  'KafkaJSLockTimeout',
]);

/**
 * Protocol errors that mean a broker, a partition's leader or a group's coordinator is moving,
 * starting or overloaded (a broker restart shows these for seconds): the request may succeed later.
 */
const UNAVAILABLE_KAFKA_TYPES = new Set([
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'BROKER_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
  'REBALANCE_IN_PROGRESS',
  'NOT_CONTROLLER',
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'KAFKA_STORAGE_ERROR',
  'FETCH_SESSION_ID_NOT_FOUND',
  'UNKNOWN_LEADER_EPOCH',
  'FENCED_LEADER_EPOCH',
  'OFFSET_NOT_AVAILABLE',
  'THROTTLING_QUOTA_EXCEEDED',
  'CONCURRENT_TRANSACTIONS',
]);

/** The engine names `engine-unavailable` errors of the message log carry. */
export const KAFKA = 'Kafka';
export const SCHEMA_REGISTRY = 'schema registry';

const BAD_REQUEST_TYPES = new Set([
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_PARTITIONS',
  'INVALID_REPLICATION_FACTOR',
  'INVALID_REPLICA_ASSIGNMENT',
  'INVALID_CONFIG',
  'POLICY_VIOLATION',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
]);

interface ErrorLike {
  readonly name?: unknown;
  readonly type?: unknown;
  readonly code?: unknown;
  readonly retriable?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly status?: unknown;
}

/** The error and its `cause` chain, outermost first. */
function chain(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = error;
  while (current && typeof current === 'object' && out.length < 8 && !out.includes(current as ErrorLike)) {
    out.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return out;
}

function messageOf(error: unknown): string {
  return describeError(error);
}

/** The protocol error type (e.g. `UNKNOWN_TOPIC_OR_PARTITION`) anywhere in the cause chain, if any. */
export function kafkaErrorType(error: unknown): string | null {
  for (const e of chain(error)) if (typeof e.type === 'string') return e.type;
  return null;
}

/**
 * Whether a failure means the broker could not be reached, did not answer in time, or answered
 * that a leader or coordinator is moving or not ready.
 */
export function isKafkaUnavailable(error: unknown): boolean {
  for (const e of chain(error)) {
    if (typeof e.name === 'string' && UNAVAILABLE_KAFKA_ERRORS.has(e.name)) return true;
    if (typeof e.type === 'string' && UNAVAILABLE_KAFKA_TYPES.has(e.type)) return true;
    if (isTransientNetworkCode(e.code)) return true;
  }
  const innermost = chain(error).at(-1);
  return innermost?.retriable === true;
}

/** Maps a kafkajs failure during `action` (e.g. "publish to topic x") to a KbError. */
export function kafkaError(error: unknown, action: string): KbError {
  if (error instanceof KbError) return error;
  const type = kafkaErrorType(error);
  const detail = messageOf(error);
  if (type === 'UNKNOWN_TOPIC_OR_PARTITION') {
    return new KbError('not-found', `Kafka could not ${action}: unknown topic or partition`, { cause: error });
  }
  if (type && BAD_REQUEST_TYPES.has(type)) {
    return new KbError('bad-request', `Kafka refused to ${action}: ${detail}`, { cause: error });
  }
  if (isKafkaUnavailable(error)) {
    return engineUnavailable(KAFKA, `Kafka is unavailable (could not ${action}): ${detail}`, error);
  }
  return new KbError('internal-error', `Kafka failed to ${action}: ${detail}`, { cause: error });
}

/** The HTTP status of a schema-registry client error, or null when it is not one. */
export function registryStatus(error: unknown): number | null {
  for (const e of chain(error)) {
    if (e.name === 'ResponseError' && typeof e.status === 'number') return e.status;
  }
  return null;
}

/**
 * Whether a schema-registry failure is the registry being unreachable or overloaded. The registry
 * client reports network failures (connection refused, reset, DNS) as status 400 with the socket
 * error in the message, so those are recognised by the message.
 */
export function isRegistryUnavailable(error: unknown): boolean {
  const status = registryStatus(error);
  const detail = messageOf(error);
  if (status !== null && (status >= 500 || status === 408 || status === 429)) return true;
  if (/E(CONNREFUSED|CONNRESET|TIMEDOUT|PIPE|AI_AGAIN|NOTFOUND|HOSTUNREACH)|socket hang up|timed? ?out/i.test(detail)) {
    return true;
  }
  return chain(error).some((e) => isTransientNetworkCode(e.code));
}

/** Maps a schema-registry failure during `action` to a KbError. */
export function registryError(error: unknown, action: string): KbError {
  if (error instanceof KbError) return error;
  const status = registryStatus(error);
  const detail = messageOf(error).replace(/^Confluent_Schema_Registry - /, '');
  if (isRegistryUnavailable(error)) {
    return engineUnavailable(
      SCHEMA_REGISTRY,
      `The schema registry is unavailable (could not ${action}): ${detail}`,
      error,
    );
  }
  if (status === 404) {
    return new KbError('not-found', `The schema registry could not ${action}: ${detail}`, { cause: error });
  }
  if (status === 409) {
    return new KbError('conflict', `The schema registry refused to ${action}: ${detail}`, {
      cause: error,
      retriable: false,
    });
  }
  if (status === 422 || status === 400) {
    return new KbError('bad-request', `The schema registry refused to ${action}: ${detail}`, { cause: error });
  }
  return new KbError('internal-error', `The schema registry failed to ${action}: ${detail}`, { cause: error });
}

/**
 * Rejects with a retriable `engine-unavailable` when `promise` has not settled within `ms`. The
 * operation itself is not cancelled; its late outcome is ignored.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string, engine = KAFKA): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(engineUnavailable(engine, `${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
