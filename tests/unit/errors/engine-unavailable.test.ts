import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { engineUnavailable, isEngineUnavailable, KbError, toKbError } from '../../../core/errors/kb-error.ts';
import {
  bulkItemError,
  isUnavailableAnswer,
  requireLookupAnswer,
} from '../../../core/ports/document-store/opensearch/opensearch-http.ts';
import { kafkaError } from '../../../core/ports/message-log/kafka-errors.ts';

/**
 * One classification of "the engine cannot be used now": each adapter's error mapping turns the
 * ways its engine says so into `engine-unavailable` naming the engine, and only those.
 */

/** A kafkajs protocol error as a broker answer carries it (`createErrorFromCode`'s shape). */
function protocolError(type: string, retriable: boolean): KafkaJSProtocolError {
  // The runtime constructor takes the protocol error description; the typings only know `Error | string`.
  const description = { type, code: 0, retriable, message: type.toLowerCase() };
  return new KafkaJSProtocolError(description as unknown as Error);
}

describe('Kafka error mapping', () => {
  it.each([
    'NOT_LEADER_OR_FOLLOWER',
    'NOT_LEADER_FOR_PARTITION',
    'LEADER_NOT_AVAILABLE',
    'NOT_COORDINATOR',
    'COORDINATOR_NOT_AVAILABLE',
    'COORDINATOR_LOAD_IN_PROGRESS',
    'REQUEST_TIMED_OUT',
    'NETWORK_EXCEPTION',
  ])('%s, after kafkajs gave up retrying, is engine-unavailable naming Kafka', (type) => {
    // The protocol error as kafkajs reports it after its own retries, with the flag cleared.
    const error = new KafkaJSNumberOfRetriesExceeded(protocolError(type, false), { retryCount: 5, retryTime: 5000 });
    const mapped = kafkaError(error, 'publish to topic t');
    expect(mapped.code).toBe('engine-unavailable');
    expect(mapped.engine).toBe('Kafka');
    expect(isEngineUnavailable(mapped)).toBe(true);
  });

  it('a connection error is engine-unavailable; a refused request keeps its own code', () => {
    expect(kafkaError(new KafkaJSConnectionError('Connection error: ECONNREFUSED'), 'x').engine).toBe('Kafka');
    const tooLarge = kafkaError(protocolError('MESSAGE_TOO_LARGE', false), 'publish');
    expect(tooLarge.code).toBe('bad-request');
    expect(tooLarge.retriable).toBe(false);
  });
});

describe('OpenSearch error mapping', () => {
  it('counts busy statuses and unavailable shards or nodes as unavailable, whatever their status', () => {
    expect(isUnavailableAnswer(503, undefined)).toBe(true);
    expect(isUnavailableAnswer(429, { type: 'es_rejected_execution_exception' })).toBe(true);
    expect(isUnavailableAnswer(500, { type: 'node_not_connected_exception' })).toBe(true);
    expect(
      isUnavailableAnswer(500, {
        type: 'search_phase_execution_exception',
        root_cause: [{ type: 'no_shard_available_action_exception' }],
      }),
    ).toBe(true);
    expect(
      isUnavailableAnswer(403, { type: 'cluster_block_exception', reason: 'blocked by: [FORBIDDEN/4/index closed]' }),
    ).toBe(true);
    expect(isUnavailableAnswer(400, { type: 'mapper_parsing_exception' })).toBe(false);
    expect(isUnavailableAnswer(500, { type: 'null_pointer_exception' })).toBe(false);
  });

  it('an _mget item whose shard did not answer is engine-unavailable, never "not found"', () => {
    const failed = {
      _id: 'doc:1',
      error: {
        type: 'no_shard_available_action_exception',
        reason: 'No shard available for [get [kb-versions][doc:1]]',
      },
    };
    let thrown: unknown;
    try {
      requireLookupAnswer(failed, 'version');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KbError);
    expect((thrown as KbError).code).toBe('engine-unavailable');
    expect((thrown as KbError).engine).toBe('OpenSearch');
    // A plain miss and a missing index are answers.
    expect(() => requireLookupAnswer({ _id: 'doc:2', found: false }, 'version')).not.toThrow();
    expect(() =>
      requireLookupAnswer({ _id: 'doc:3', error: { type: 'index_not_found_exception', reason: 'no such index' } }, 'x'),
    ).not.toThrow();
  });

  it('a bulk item on an unavailable shard is engine-unavailable; a refused document is not', () => {
    const unavailable = bulkItemError(
      { id: 'c:1', status: 503, errorType: 'unavailable_shards_exception', reason: 'primary shard is not active' },
      'write chunks',
    );
    expect(unavailable.code).toBe('engine-unavailable');
    const refused = bulkItemError(
      { id: 'c:2', status: 400, errorType: 'mapper_parsing_exception', reason: 'failed to parse' },
      'write chunks',
    );
    expect(refused.code).toBe('internal-error');
  });
});

describe('toKbError', () => {
  it('finds an engine-unavailable error under a wrapper that is not a KbError', () => {
    const inner = engineUnavailable('object storage (S3)', 'Object storage is unreachable');
    const wrapped = new Error('reading the upload failed', { cause: inner });
    expect(toKbError(wrapped)).toBe(inner);
  });

  it('turns a bare refused connection into engine-unavailable and anything else unknown into internal-error', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' });
    expect(toKbError(refused).code).toBe('engine-unavailable');
    expect(toKbError(new TypeError('x is undefined')).code).toBe('internal-error');
  });
});
