import os from 'node:os';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { KbError } from '../errors/kb-error.ts';
import { parseFolderRoots } from '../sources/folder-roots.ts';
import { parseSecretKey } from '../sources/secret-box.ts';
import { readClientConfig } from './client-config.ts';
import {
  type Config,
  ConfigSchema,
  configSchemaOf,
  type EmbeddedConfig,
  type EmbeddingProviderName,
  type RuntimeKind,
  type VectorQuantization,
} from './config.schema.ts';
import { createEnvReaders, defaultModelCache } from './config-readers.ts';
import type { VariableName } from './config-variables.ts';

export type {
  Config,
  DistributedConfig,
  EmbeddedConfig,
  EmbeddingProviderName,
  RuntimeKind,
} from './config.schema.ts';
export { CONFIG_VARIABLES, type ConfigVariable } from './config-variables.ts';

/**
 * The one validated configuration of the service and the only reader of `process.env`.
 * Every variable is listed in {@link CONFIG_VARIABLES}, which also feeds the README's table; the
 * shape of the result is {@link ConfigSchema}, a union discriminated on `runtime`.
 */

/** The variable behind each setting a runtime may require (schema paths of the distributed branch). */
const VARIABLE_AT: Readonly<Record<string, VariableName>> = {
  '/schemaRegistryUrl': 'KB_SCHEMA_REGISTRY_URL',
  '/s3/endpoint': 'KB_S3_ENDPOINT',
  '/opensearch/url': 'KB_OPENSEARCH_URL',
  '/clickhouse/url': 'KB_CLICKHOUSE_URL',
};

/** What the variables read as, before the runtime's branch of the schema has been checked. */
type ReadConfig = Omit<EmbeddedConfig, 'runtime'> & { readonly runtime: RuntimeKind };

/** Reads and validates the configuration; throws one error listing every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const { str, opt, url, int, optInt, bool, oneOf, list } = createEnvReaders(env, problems);
  const fraction = (name: VariableName): number => {
    const value = str(name);
    const n = Number(value);
    if (!/^\d*\.?\d+$/.test(value) || n > 1) {
      problems.push(`${name}: "${value}" is not a number from 0 to 1`);
      return 0.15;
    }
    return n;
  };

  const config: ReadConfig = {
    runtime: oneOf<RuntimeKind>('KB_RUNTIME'),
    host: str('HOST'),
    port: int('PORT'),
    dataDir: path.resolve(str('KB_DATA_DIR')),
    logLevel: oneOf<EmbeddedConfig['logLevel']>('KB_LOG_LEVEL'),
    problemBaseUrl: url('KB_PROBLEM_BASE_URL'),
    bootstrapKey: bool('KB_BOOTSTRAP_KEY'),
    topicPrefix: str('KB_TOPIC_PREFIX'),
    maxUploadBytes: int('KB_MAX_UPLOAD_BYTES'),
    requestTimeoutMs: int('KB_REQUEST_TIMEOUT_MS'),
    maxConcurrentUploads: int('KB_MAX_CONCURRENT_UPLOADS'),
    backlog: { maxPerWorkspace: int('KB_MAX_BACKLOG_PER_WORKSPACE'), maxTotal: int('KB_MAX_BACKLOG') },
    sweepIntervalMs: int('KB_SWEEP_INTERVAL_MS'),
    strandedCheckMs: int('KB_STRANDED_CHECK_MS'),
    strandedAfterMs: int('KB_STRANDED_AFTER_MS'),
    sources: {
      folderRoots: (() => {
        const read = parseFolderRoots(str('KB_SOURCE_FOLDER_ROOTS'));
        problems.push(...read.problems);
        return read.roots;
      })(),
      itemTimeoutMs: int('KB_SOURCE_ITEM_TIMEOUT_MS'),
      maxDeleteFraction: fraction('KB_SOURCE_MAX_DELETE_FRACTION'),
      runStaleMs: int('KB_SOURCE_RUN_STALE_MS'),
      secretKey: (() => {
        const key = opt('KB_SOURCE_SECRET_KEY');
        if (key !== null && !parseSecretKey(key)) {
          problems.push('KB_SOURCE_SECRET_KEY: not 32 bytes as 64 hex digits or base64');
        }
        return key;
      })(),
      fetchTimeoutMs: int('KB_SOURCE_FETCH_TIMEOUT_MS'),
    },
    kafka: {
      brokers: list('KB_KAFKA_BROKERS'),
      clientId: str('KB_KAFKA_CLIENT_ID'),
      partitions: int('KB_KAFKA_PARTITIONS'),
      partitionConcurrency: int('KB_KAFKA_PARTITION_CONCURRENCY'),
      keyConcurrency: int('KB_KAFKA_KEY_CONCURRENCY'),
      commitIntervalMs: int('KB_KAFKA_COMMIT_INTERVAL_MS'),
      minFetchBytes: int('KB_KAFKA_MIN_FETCH_BYTES'),
      fetchMaxWaitMs: int('KB_KAFKA_FETCH_MAX_WAIT_MS'),
    },
    schemaRegistryUrl: url('KB_SCHEMA_REGISTRY_URL'),
    s3: {
      endpoint: url('KB_S3_ENDPOINT'),
      accessKey: str('KB_S3_ACCESS_KEY'),
      secretKey: str('KB_S3_SECRET_KEY'),
      region: str('KB_S3_REGION'),
      bucket: str('KB_S3_BUCKET'),
    },
    opensearch: {
      url: url('KB_OPENSEARCH_URL'),
      indexPrefix: str('KB_OPENSEARCH_INDEX_PREFIX'),
      efSearch: int('KB_OPENSEARCH_EF_SEARCH'),
      shards: int('KB_OPENSEARCH_SHARDS'),
      replicas: int('KB_OPENSEARCH_REPLICAS'),
      changePollMs: int('KB_OPENSEARCH_CHANGE_POLL_MS'),
      documentsRefreshMs: int('KB_OPENSEARCH_DOCUMENTS_REFRESH_MS'),
    },
    clickhouse: {
      url: url('KB_CLICKHOUSE_URL'),
      user: str('KB_CLICKHOUSE_USER'),
      password: str('KB_CLICKHOUSE_PASSWORD'),
      database: str('KB_CLICKHOUSE_DATABASE'),
      auditFlushMs: int('KB_AUDIT_FLUSH_MS'),
    },
    embedding: {
      provider: oneOf<EmbeddingProviderName>('KB_EMBEDDING_PROVIDER'),
      batchSize: int('KB_EMBEDDING_BATCH_SIZE'),
      concurrency: int('KB_EMBEDDING_CONCURRENCY'),
      transformersModel: str('KB_TRANSFORMERS_MODEL'),
      transformersModelPath: path.resolve(opt('KB_TRANSFORMERS_MODEL_PATH') ?? defaultModelCache(env)),
      transformersAllowRemote: bool('KB_TRANSFORMERS_ALLOW_REMOTE'),
      threads: int('KB_EMBEDDING_THREADS') || os.availableParallelism(),
      modelFetch: bool('KB_MODEL_FETCH'),
      modelRepositoryUrl: url('KB_MODEL_REPOSITORY_URL') ?? 'https://repo1.maven.org/maven2',
      cohereApiKey: opt('KB_COHERE_API_KEY'),
      cohereModel: str('KB_COHERE_MODEL'),
      cohereBaseUrl: url('KB_COHERE_BASE_URL'),
      url: url('KB_EMBEDDING_URL'),
      model: opt('KB_EMBEDDING_MODEL'),
      apiKey: opt('KB_EMBEDDING_API_KEY'),
      dimensions: int('KB_EMBEDDING_DIMENSIONS') || null,
      timeoutMs: int('KB_EMBEDDING_TIMEOUT_MS'),
    },
    search: { semanticWeightPercent: int('KB_HYBRID_SEMANTIC_WEIGHT') },
    vectorIndex: bool('KB_VECTOR_INDEX')
      ? {
          exactBelow: int('KB_VECTOR_INDEX_EXACT_BELOW'),
          expansionSearch: int('KB_VECTOR_INDEX_EF'),
          quantization: oneOf<VectorQuantization>('KB_VECTOR_INDEX_QUANTIZATION'),
        }
      : null,
    keywordIndex: bool('KB_KEYWORD_INDEX')
      ? {
          syncBelow: int('KB_KEYWORD_INDEX_SYNC_BELOW'),
          exactBelow: int('KB_KEYWORD_INDEX_EXACT_BELOW'),
          threads: Math.max(2, int('KB_KEYWORD_INDEX_THREADS') || os.availableParallelism()),
        }
      : null,
    chunking: {
      chunkTokens: int('KB_CHUNK_TOKENS'),
      overlapTokens: int('KB_CHUNK_OVERLAP'),
      maxChunks: int('KB_MAX_CHUNKS'),
    },
    embedSliceChunks: int('KB_EMBED_SLICE_CHUNKS'),
    embedSliceMs: int('KB_EMBED_SLICE_MS'),
    logKeyConcurrency: int('KB_LOG_KEY_CONCURRENCY'),
    shutdownGraceMs: int('KB_SHUTDOWN_GRACE_MS'),
    startupTimeoutMs: int('KB_STARTUP_TIMEOUT_MS'),
    storage: { minFreeBytes: int('KB_MIN_FREE_BYTES'), reserveBytes: int('KB_STORAGE_RESERVE_BYTES') },
    outbound: { allowPrivate: bool('KB_OUTBOUND_ALLOW_PRIVATE') },
    webhooks: {
      retryBaseMs: int('KB_WEBHOOK_RETRY_BASE_MS'),
      timeoutMs: int('KB_WEBHOOK_TIMEOUT_MS'),
      disableAfterMs: int('KB_WEBHOOK_DISABLE_AFTER_MS'),
      deliveryRetentionMs: int('KB_WEBHOOK_DELIVERY_RETENTION_DAYS') * 86_400_000,
      dispatch: bool('KB_WEBHOOK_DISPATCH'),
    },
    events: { heartbeatMs: int('KB_EVENTS_HEARTBEAT_MS'), maxStreamsPerKey: int('KB_MAX_STREAMS_PER_KEY') },
    idempotency: {
      ttlMs: int('KB_IDEMPOTENCY_TTL_HOURS') * 3_600_000,
      waitMs: int('KB_IDEMPOTENCY_WAIT_MS'),
    },
    parsing: {
      threads: int('KB_PARSE_THREADS'),
      taskTimeoutMs: int('KB_PARSE_TIMEOUT_MS'),
      maxHeapMb: int('KB_PARSE_MAX_HEAP_MB'),
      ocr: bool('KB_OCR'),
    },
    retry: {
      maxAttempts: int('KB_STAGE_MAX_ATTEMPTS'),
      baseDelayMs: int('KB_RETRY_BASE_MS'),
      maxDelayMs: int('KB_RETRY_MAX_MS'),
      engineWaitMs: int('KB_STAGE_ENGINE_WAIT_MS'),
    },
    rateLimit: {
      syncIntervalMs: int('KB_RATE_LIMIT_SYNC_MS'),
      soloSyncIntervalMs: int('KB_RATE_LIMIT_SOLO_SYNC_MS'),
    },
    keyCacheMs: int('KB_KEY_CACHE_MS'),
    tokens: {
      secret: (() => {
        const key = opt('KB_TOKEN_SECRET');
        if (key !== null && !parseSecretKey(key))
          problems.push('KB_TOKEN_SECRET: not 32 bytes as 64 hex digits or base64');
        return key;
      })(),
      maxTtlSeconds: int('KB_TOKEN_MAX_TTL_S'),
    },
    keyTouchMs: int('KB_KEY_TOUCH_MS'),
    metrics: { token: opt('KB_METRICS_TOKEN'), host: str('KB_METRICS_HOST'), port: optInt('KB_METRICS_PORT') },
    dashboard: {
      bootstrapAccount: bool('KB_BOOTSTRAP_ACCOUNT'),
      sessionTtlSeconds: int('KB_SESSION_TTL_SECONDS'),
      secureCookie: bool('KB_COOKIE_SECURE'),
      maxFailedSignIns: int('KB_SIGNIN_MAX_FAILURES'),
      lockoutSeconds: int('KB_SIGNIN_LOCKOUT_SECONDS'),
    },
    client: readClientConfig({ url, opt }),
  };

  if (config.chunking.overlapTokens >= config.chunking.chunkTokens) {
    problems.push('KB_CHUNK_OVERLAP must be smaller than KB_CHUNK_TOKENS');
  }
  if (config.embedding.provider === 'cohere' && !config.embedding.cohereApiKey) {
    problems.push('KB_COHERE_API_KEY is required when KB_EMBEDDING_PROVIDER=cohere');
  }
  if (config.embedding.provider === 'openai') {
    if (!config.embedding.url) problems.push('KB_EMBEDDING_URL is required when KB_EMBEDDING_PROVIDER=openai');
    if (!config.embedding.model) problems.push('KB_EMBEDDING_MODEL is required when KB_EMBEDDING_PROVIDER=openai');
  }
  // The runtime's branch of the schema: in the distributed runtime every engine URL must be set.
  for (const error of Value.Errors(configSchemaOf(config.runtime), config)) {
    const name = VARIABLE_AT[error.path];
    const problem = name ? `${name} is required when KB_RUNTIME=${config.runtime}` : `${error.path}: ${error.message}`;
    if (!problems.includes(problem)) problems.push(problem);
  }
  if (problems.length > 0 || !Value.Check(ConfigSchema, config)) {
    throw new KbError('config-invalid', `Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return config;
}
/** A configuration for tests and tools: defaults, overridden by `overrides` (variable names). */
export function configFrom(overrides: Partial<Record<VariableName, string>> = {}): Config {
  return loadConfig({ ...overrides });
}
