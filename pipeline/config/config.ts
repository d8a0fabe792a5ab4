import os from 'node:os';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';
import { createEnvReaders, defaultModelCache } from './config-readers.ts';
import type { VariableName } from './config-variables.ts';

export { CONFIG_VARIABLES, type ConfigVariable } from './config-variables.ts';

/**
 * The one validated configuration of the service and the only reader of `process.env`.
 * Every variable is listed in {@link CONFIG_VARIABLES}, which also feeds the README's table.
 */

export type RuntimeKind = 'embedded' | 'distributed';
export type EmbeddingProviderName = 'local' | 'transformers' | 'cohere';

export interface Config {
  readonly runtime: RuntimeKind;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly problemBaseUrl: string | null;
  readonly bootstrapKey: boolean;
  readonly topicPrefix: string;
  readonly maxUploadBytes: number;
  /** Time a request (headers and body) has to arrive completely; then 408. */
  readonly requestTimeoutMs: number;
  /** How often the object store is swept for leftovers of crashes (0: only at start-up). */
  readonly sweepIntervalMs: number;
  /** Uploads (POST/PUT with a file) one API key may have in progress at once in one API process. */
  readonly maxConcurrentUploads: number;
  readonly kafka: {
    readonly brokers: string[];
    readonly clientId: string;
    readonly partitions: number;
    readonly partitionConcurrency: number;
    readonly keyConcurrency: number;
  };
  readonly schemaRegistryUrl: string | null;
  readonly s3: {
    readonly endpoint: string | null;
    readonly accessKey: string;
    readonly secretKey: string;
    readonly region: string;
    readonly bucket: string;
  };
  readonly opensearch: {
    readonly url: string | null;
    readonly indexPrefix: string;
    readonly efSearch: number;
    readonly shards: number;
    readonly replicas: number;
    readonly changePollMs: number;
  };
  readonly clickhouse: {
    readonly url: string | null;
    readonly user: string;
    readonly password: string;
    readonly database: string;
  };
  readonly embedding: {
    readonly provider: EmbeddingProviderName;
    readonly batchSize: number;
    readonly transformersModel: string;
    /** Folder holding `<model id>/` (the model cache unless configured). */
    readonly transformersModelPath: string;
    readonly transformersAllowRemote: boolean;
    /** ONNX Runtime intra-op threads of the `transformers` provider. */
    readonly threads: number;
    /** Whether a missing catalogue model may be fetched from `modelRepositoryUrl`. */
    readonly modelFetch: boolean;
    readonly modelRepositoryUrl: string;
    readonly cohereApiKey: string | null;
    readonly cohereModel: string;
    readonly cohereBaseUrl: string | null;
  };
  /** The embedded runtime's HNSW vector index (null: exact scans only). */
  readonly vectorIndex: { readonly exactBelow: number; readonly expansionSearch: number } | null;
  /** Hybrid search's default weight of the semantic ranking, 0–100 (the keyword ranking gets the rest). */
  readonly search: { readonly semanticWeightPercent: number };
  readonly chunking: { readonly chunkTokens: number; readonly overlapTokens: number; readonly maxChunks: number };
  /**
   * Fair scheduling of the embed stage: a document's chunks are embedded at most `sliceChunks` per
   * turn; the rest waits behind the events queued meanwhile on the same partition.
   */
  readonly embedSliceChunks: number;
  /** How long SIGTERM waits for the stages to reach a batch boundary before the process exits anyway. */
  readonly shutdownGraceMs: number;
  readonly parsing: {
    readonly threads: number;
    readonly taskTimeoutMs: number;
    readonly maxHeapMb: number;
    readonly ocr: boolean;
  };
  readonly retry: { readonly maxAttempts: number; readonly baseDelayMs: number; readonly maxDelayMs: number };
  readonly rateLimit: { readonly syncIntervalMs: number };
  readonly keyCacheMs: number;
  /**
   * Prometheus `/metrics`: a separate listener on `host:port` when `port` is set (`kb worker` uses
   * 9464 when it is not), else the API port; `token`, when set, is required as a bearer token.
   */
  readonly metrics: { readonly token: string | null; readonly host: string; readonly port: number | null };
  /** Dashboard accounts and sessions. */
  readonly dashboard: {
    /** On first start with no account at all, create an owner of workspace `default` and print its password. */
    readonly bootstrapAccount: boolean;
    /** How long a signed-in session lasts, in seconds. */
    readonly sessionTtlSeconds: number;
    /** Whether the session cookie carries `Secure` (only sent over HTTPS). */
    readonly secureCookie: boolean;
    /** Wrong passwords in a row (per account) before sign-in is locked. */
    readonly maxFailedSignIns: number;
    /** How long a locked account refuses sign-in, in seconds. */
    readonly lockoutSeconds: number;
  };
  /** Where CLI commands that talk HTTP (`kb ingest`) find the service. */
  readonly client: { readonly url: string; readonly apiKey: string | null };
}

/** Reads and validates the configuration; throws one error listing every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const { str, opt, url, int, optInt, bool, oneOf, list } = createEnvReaders(env, problems);

  const config: Config = {
    runtime: oneOf<RuntimeKind>('KB_RUNTIME'),
    host: str('HOST'),
    port: int('PORT'),
    dataDir: path.resolve(str('KB_DATA_DIR')),
    logLevel: oneOf('KB_LOG_LEVEL'),
    problemBaseUrl: url('KB_PROBLEM_BASE_URL'),
    bootstrapKey: bool('KB_BOOTSTRAP_KEY'),
    topicPrefix: str('KB_TOPIC_PREFIX'),
    maxUploadBytes: int('KB_MAX_UPLOAD_BYTES'),
    requestTimeoutMs: int('KB_REQUEST_TIMEOUT_MS'),
    maxConcurrentUploads: int('KB_MAX_CONCURRENT_UPLOADS'),
    sweepIntervalMs: int('KB_SWEEP_INTERVAL_MS'),
    kafka: {
      brokers: list('KB_KAFKA_BROKERS'),
      clientId: str('KB_KAFKA_CLIENT_ID'),
      partitions: int('KB_KAFKA_PARTITIONS'),
      partitionConcurrency: int('KB_KAFKA_PARTITION_CONCURRENCY'),
      keyConcurrency: int('KB_KAFKA_KEY_CONCURRENCY'),
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
    },
    clickhouse: {
      url: url('KB_CLICKHOUSE_URL'),
      user: str('KB_CLICKHOUSE_USER'),
      password: str('KB_CLICKHOUSE_PASSWORD'),
      database: str('KB_CLICKHOUSE_DATABASE'),
    },
    embedding: {
      provider: oneOf<EmbeddingProviderName>('KB_EMBEDDING_PROVIDER'),
      batchSize: int('KB_EMBEDDING_BATCH_SIZE'),
      transformersModel: str('KB_TRANSFORMERS_MODEL'),
      transformersModelPath: path.resolve(opt('KB_TRANSFORMERS_MODEL_PATH') ?? defaultModelCache(env)),
      transformersAllowRemote: bool('KB_TRANSFORMERS_ALLOW_REMOTE'),
      threads: int('KB_EMBEDDING_THREADS') || os.availableParallelism(),
      modelFetch: bool('KB_MODEL_FETCH'),
      modelRepositoryUrl: url('KB_MODEL_REPOSITORY_URL') ?? 'https://repo1.maven.org/maven2',
      cohereApiKey: opt('KB_COHERE_API_KEY'),
      cohereModel: str('KB_COHERE_MODEL'),
      cohereBaseUrl: url('KB_COHERE_BASE_URL'),
    },
    search: { semanticWeightPercent: int('KB_HYBRID_SEMANTIC_WEIGHT') },
    vectorIndex: bool('KB_VECTOR_INDEX')
      ? { exactBelow: int('KB_VECTOR_INDEX_EXACT_BELOW'), expansionSearch: int('KB_VECTOR_INDEX_EF') }
      : null,
    chunking: {
      chunkTokens: int('KB_CHUNK_TOKENS'),
      overlapTokens: int('KB_CHUNK_OVERLAP'),
      maxChunks: int('KB_MAX_CHUNKS'),
    },
    embedSliceChunks: int('KB_EMBED_SLICE_CHUNKS'),
    shutdownGraceMs: int('KB_SHUTDOWN_GRACE_MS'),
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
    },
    rateLimit: { syncIntervalMs: int('KB_RATE_LIMIT_SYNC_MS') },
    keyCacheMs: int('KB_KEY_CACHE_MS'),
    metrics: { token: opt('KB_METRICS_TOKEN'), host: str('KB_METRICS_HOST'), port: optInt('KB_METRICS_PORT') },
    dashboard: {
      bootstrapAccount: bool('KB_BOOTSTRAP_ACCOUNT'),
      sessionTtlSeconds: int('KB_SESSION_TTL_SECONDS'),
      secureCookie: bool('KB_COOKIE_SECURE'),
      maxFailedSignIns: int('KB_SIGNIN_MAX_FAILURES'),
      lockoutSeconds: int('KB_SIGNIN_LOCKOUT_SECONDS'),
    },
    client: { url: url('KB_API_URL') ?? 'http://127.0.0.1:8080', apiKey: opt('KB_API_KEY') },
  };

  if (config.chunking.overlapTokens >= config.chunking.chunkTokens) {
    problems.push('KB_CHUNK_OVERLAP must be smaller than KB_CHUNK_TOKENS');
  }
  if (config.embedding.provider === 'cohere' && !config.embedding.cohereApiKey) {
    problems.push('KB_COHERE_API_KEY is required when KB_EMBEDDING_PROVIDER=cohere');
  }
  if (config.runtime === 'distributed') {
    const required: Array<[VariableName, unknown]> = [
      ['KB_SCHEMA_REGISTRY_URL', config.schemaRegistryUrl],
      ['KB_S3_ENDPOINT', config.s3.endpoint],
      ['KB_OPENSEARCH_URL', config.opensearch.url],
      ['KB_CLICKHOUSE_URL', config.clickhouse.url],
    ];
    for (const [name, value] of required) {
      if (value === null) problems.push(`${name} is required when KB_RUNTIME=distributed`);
    }
  }
  if (problems.length > 0) {
    throw new KbError('bad-request', `Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return config;
}
/** A configuration for tests and tools: defaults, overridden by `overrides` (variable names). */
export function configFrom(overrides: Partial<Record<VariableName, string>> = {}): Config {
  return loadConfig({ ...overrides });
}
