import os from 'node:os';
import path from 'node:path';
import { KbError } from '../errors/kb-error.ts';

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

type Kind = 'string' | 'integer' | 'boolean' | 'enum' | 'list' | 'url';

export interface ConfigVariable {
  readonly name: string;
  readonly kind: Kind;
  readonly default: string;
  readonly description: string;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
}

const v = (
  name: string,
  kind: Kind,
  def: string,
  description: string,
  extra: Partial<ConfigVariable> = {},
): ConfigVariable => ({ name, kind, default: def, description, ...extra });

export const CONFIG_VARIABLES = [
  v(
    'KB_RUNTIME',
    'enum',
    'embedded',
    'Runtime: `embedded` (one process, SQLite and files) or `distributed` (Kafka, schema registry, S3/MinIO, OpenSearch, ClickHouse).',
    { values: ['embedded', 'distributed'] },
  ),
  v('HOST', 'string', '127.0.0.1', 'Address the HTTP API binds to.'),
  v('PORT', 'integer', '8080', 'Port the HTTP API listens on.', { min: 0, max: 65535 }),
  v(
    'KB_DATA_DIR',
    'string',
    './data',
    'Data directory of the embedded runtime (SQLite databases, stored files). Relative paths resolve from the working directory.',
  ),
  v('KB_LOG_LEVEL', 'enum', 'info', 'Log level.', {
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
  }),
  v(
    'KB_PROBLEM_BASE_URL',
    'url',
    '',
    'Base of problem `type` URIs (`<base>/errors/<kind>`); empty means the origin of each request.',
  ),
  v(
    'KB_BOOTSTRAP_KEY',
    'boolean',
    'true',
    'On first start with no API key at all, create one with every permission for workspace `default` and print it once.',
  ),
  v(
    'KB_TOPIC_PREFIX',
    'string',
    '',
    'Prefix of every topic and consumer-group name (lets several deployments or test runs share one log).',
  ),
  v('KB_MAX_UPLOAD_BYTES', 'integer', '52428800', 'Largest accepted upload in bytes.', { min: 1 }),
  v(
    'KB_REQUEST_TIMEOUT_MS',
    'integer',
    '120000',
    'Time a request, body included, has to arrive completely; a slower one is answered 408 and closed, and its staged file removed. Also the age after which start-up removes staging files left by a crash.',
    { min: 1000 },
  ),
  v(
    'KB_SWEEP_INTERVAL_MS',
    'integer',
    '3600000',
    'How often a process running the API or a stage removes what crashes left in the object store (temporary files, uploads no version references, outputs of versions that no longer exist), besides once at start-up; 0 means only at start-up.',
    { min: 0 },
  ),
  v(
    'KB_MAX_CONCURRENT_UPLOADS',
    'integer',
    '8',
    'Uploads (POST or PUT with a file) one API key may have in progress at once in one API process; one more is answered 429.',
    { min: 1 },
  ),
  v('KB_KAFKA_BROKERS', 'list', '127.0.0.1:9092', 'Comma-separated Kafka bootstrap brokers (distributed).'),
  v('KB_KAFKA_CLIENT_ID', 'string', 'kb-document-service', 'Kafka client id (distributed).'),
  v(
    'KB_KAFKA_PARTITIONS',
    'integer',
    '6',
    'Partitions of each topic the service creates; the ceiling on consumers per stage.',
    { min: 1, max: 1024 },
  ),
  v(
    'KB_KAFKA_PARTITION_CONCURRENCY',
    'integer',
    '4',
    'Partitions of a topic one stage consumer handles at the same time (distributed).',
    { min: 1, max: 1024 },
  ),
  v(
    'KB_KAFKA_KEY_CONCURRENCY',
    'integer',
    '4',
    "Documents of one partition a stage consumer handles at the same time; each document's events stay in order (distributed).",
    { min: 1, max: 256 },
  ),
  v(
    'KB_SCHEMA_REGISTRY_URL',
    'url',
    '',
    "Confluent-compatible schema registry URL (distributed), e.g. `http://127.0.0.1:8081` or Apicurio's `/apis/ccompat/v7`.",
  ),
  v('KB_S3_ENDPOINT', 'url', '', 'S3/MinIO endpoint URL (distributed).'),
  v('KB_S3_ACCESS_KEY', 'string', '', 'S3 access key (distributed).'),
  v('KB_S3_SECRET_KEY', 'string', '', 'S3 secret key (distributed).'),
  v('KB_S3_REGION', 'string', 'us-east-1', 'S3 region (distributed).'),
  v(
    'KB_S3_BUCKET',
    'string',
    'kb-documents',
    'Bucket holding uploaded files and derived artefacts (distributed); created if missing.',
  ),
  v('KB_OPENSEARCH_URL', 'url', '', 'OpenSearch URL (distributed).'),
  v('KB_OPENSEARCH_INDEX_PREFIX', 'string', 'kb', 'Prefix of the OpenSearch index names (distributed).'),
  v(
    'KB_OPENSEARCH_EF_SEARCH',
    'integer',
    '200',
    'HNSW beam width of OpenSearch vector queries (distributed; at least the candidate count): higher is closer to exact and slower.',
    { min: 1, max: 10000 },
  ),
  v(
    'KB_OPENSEARCH_SHARDS',
    'integer',
    '1',
    'Primary shards of each OpenSearch index the service creates (distributed; an existing index keeps its own).',
    { min: 1, max: 1024 },
  ),
  v(
    'KB_OPENSEARCH_REPLICAS',
    'integer',
    '0',
    'Replicas of each OpenSearch index the service creates (distributed; 0 suits one node, 1 or more a cluster).',
    { min: 0, max: 16 },
  ),
  v(
    'KB_OPENSEARCH_CHANGE_POLL_MS',
    'integer',
    '500',
    'How often an API process asks OpenSearch whether documents changed (distributed): a list answered from its cache shows a change another process made at most this much later.',
    { min: 50, max: 60000 },
  ),
  v('KB_CLICKHOUSE_URL', 'url', '', 'ClickHouse HTTP URL (distributed).'),
  v('KB_CLICKHOUSE_USER', 'string', 'default', 'ClickHouse user (distributed).'),
  v('KB_CLICKHOUSE_PASSWORD', 'string', '', 'ClickHouse password (distributed).'),
  v(
    'KB_CLICKHOUSE_DATABASE',
    'string',
    'kb',
    'ClickHouse database holding keys, audit log and rate-limit counters; created if missing (distributed).',
  ),
  v(
    'KB_EMBEDDING_PROVIDER',
    'enum',
    'transformers',
    'Embedding provider: `transformers` (an ONNX model run locally; the default model is fetched once, then offline), `local` (small bundled model, no download), `cohere`.',
    { values: ['local', 'transformers', 'cohere'] },
  ),
  v('KB_EMBEDDING_BATCH_SIZE', 'integer', '32', 'Texts per embedding call (Cohere caps it at 96).', {
    min: 1,
    max: 1024,
  }),
  v(
    'KB_TRANSFORMERS_MODEL',
    'string',
    'BAAI/bge-small-en-v1.5',
    'Model id for the `transformers` provider (`BAAI/bge-small-en-v1.5` and `Xenova/all-MiniLM-L6-v2` are known by name; any other ONNX model folder works with mean pooling).',
  ),
  v(
    'KB_TRANSFORMERS_MODEL_PATH',
    'string',
    '',
    'Folder holding `<model id>/` for the `transformers` provider; empty: the model cache `$XDG_CACHE_HOME/kb-document-service/models` (else `~/.cache/kb-document-service/models`).',
  ),
  v('KB_EMBEDDING_THREADS', 'integer', '0', 'ONNX Runtime threads of the `transformers` provider; 0 uses every core.', {
    min: 0,
    max: 256,
  }),
  v(
    'KB_MODEL_FETCH',
    'boolean',
    'true',
    'Fetch a missing catalogue model (the default one) once, at install or first start, into the model folder.',
  ),
  v(
    'KB_MODEL_REPOSITORY_URL',
    'url',
    'https://repo1.maven.org/maven2',
    'Maven repository the default model is fetched from (Maven Central or a mirror of it).',
  ),
  v(
    'KB_TRANSFORMERS_ALLOW_REMOTE',
    'boolean',
    'false',
    'Let the `transformers` provider download the model from the hub.',
  ),
  v('KB_COHERE_API_KEY', 'string', '', 'Cohere API key (required for the `cohere` provider).'),
  v('KB_COHERE_MODEL', 'string', 'embed-english-v3.0', 'Cohere embedding model.'),
  v('KB_COHERE_BASE_URL', 'url', '', "Cohere API base URL; empty uses Cohere's own."),
  v(
    'KB_VECTOR_INDEX',
    'boolean',
    'true',
    'Embedded runtime: answer vector queries through an HNSW index kept beside the database (false: exact scans only).',
  ),
  v(
    'KB_VECTOR_INDEX_EXACT_BELOW',
    'integer',
    '2000',
    'Embedded runtime: a workspace with at most this many chunks is searched by exact scan (fast at that size, and exact).',
    { min: 0 },
  ),
  v(
    'KB_VECTOR_INDEX_EF',
    'integer',
    '400',
    'Embedded runtime: the HNSW query beam width (`expansion_search`); a query of k candidates uses at least k.',
    { min: 1, max: 4096 },
  ),
  v(
    'KB_HYBRID_SEMANTIC_WEIGHT',
    'integer',
    '60',
    'Hybrid search: percent of the fused score that comes from the semantic ranking (the keyword ranking gets the rest); a request may set `weights`.',
    { min: 0, max: 100 },
  ),
  v('KB_CHUNK_TOKENS', 'integer', '512', 'Target chunk size in tokens.', { min: 32, max: 8192 }),
  v('KB_CHUNK_OVERLAP', 'integer', '64', 'Tokens of overlap carried from one chunk into the next.', {
    min: 0,
    max: 1024,
  }),
  v(
    'KB_MAX_CHUNKS',
    'integer',
    '20000',
    'Most chunks of one document; a document that would need more fails with `content-too-large` at the chunk stage, before embedding.',
    { min: 1 },
  ),
  v(
    'KB_EMBED_SLICE_CHUNKS',
    'integer',
    '256',
    'Most chunks of one document the embed stage embeds in one turn; the rest is queued again behind the documents waiting on the same partition, so a large document cannot hold up small ones (see Fair ingestion).',
    { min: 1 },
  ),
  v(
    'KB_SHUTDOWN_GRACE_MS',
    'integer',
    '10000',
    'On SIGTERM/SIGINT, how long the stages get to reach their next batch boundary (the rest of the work is redelivered after a restart) before the process exits anyway; a second signal exits at once.',
    { min: 0 },
  ),
  v('KB_PARSE_THREADS', 'integer', '2', 'Threads of the parsing pool.', { min: 1, max: 64 }),
  v('KB_PARSE_TIMEOUT_MS', 'integer', '120000', 'Time limit of one parsing task.', { min: 100 }),
  v('KB_PARSE_MAX_HEAP_MB', 'integer', '512', 'Heap limit of a parsing thread in MB.', { min: 64 }),
  v('KB_OCR', 'boolean', 'true', 'OCR PDF pages that have no text layer.'),
  v(
    'KB_STAGE_MAX_ATTEMPTS',
    'integer',
    '5',
    'Attempts of a stage on a retriable error before the event goes to the dead-letter topic.',
    { min: 1, max: 100 },
  ),
  v(
    'KB_RETRY_BASE_MS',
    'integer',
    '200',
    'First backoff delay of a retried stage; doubles each attempt, with full jitter.',
    { min: 1 },
  ),
  v('KB_RETRY_MAX_MS', 'integer', '30000', 'Largest backoff delay.', { min: 1 }),
  v(
    'KB_RATE_LIMIT_SYNC_MS',
    'integer',
    '1000',
    'How often an API process shares its rate-limit counts with the others (distributed).',
    { min: 50, max: 1000 },
  ),
  v(
    'KB_KEY_CACHE_MS',
    'integer',
    '2000',
    'How long an API process trusts a looked-up key before reading it again (revocation latency).',
    { min: 0, max: 5000 },
  ),
  v(
    'KB_METRICS_TOKEN',
    'string',
    '',
    'Bearer token a scraper must send to read `/metrics` (`Authorization: Bearer <token>`). `/metrics` on the API port answers only when it is set; a separate metrics port (`KB_METRICS_PORT`) takes it too when set.',
  ),
  v(
    'KB_METRICS_PORT',
    'integer',
    '',
    'Serve `/metrics` (and `/health/live`, `/health/ready`) on this separate port instead of the API port; `kb worker` listens on 9464 when empty (`--metrics-port` overrides; 0 picks a free port).',
    { min: 0, max: 65535 },
  ),
  v('KB_METRICS_HOST', 'string', '127.0.0.1', 'Address the separate metrics port binds to.'),
  v(
    'KB_BOOTSTRAP_ACCOUNT',
    'boolean',
    'true',
    'On first start with no dashboard account at all, create an owner account for workspace `default` and print its one-time password.',
  ),
  v('KB_SESSION_TTL_SECONDS', 'integer', '43200', 'How long a dashboard sign-in lasts, in seconds.', {
    min: 1,
    max: 2592000,
  }),
  v(
    'KB_COOKIE_SECURE',
    'boolean',
    'false',
    'Mark the dashboard session cookie `Secure` (sent over HTTPS only); turn on behind TLS.',
  ),
  v(
    'KB_SIGNIN_MAX_FAILURES',
    'integer',
    '5',
    'Wrong passwords in a row after which an account cannot sign in for `KB_SIGNIN_LOCKOUT_SECONDS`.',
    { min: 1, max: 100 },
  ),
  v('KB_SIGNIN_LOCKOUT_SECONDS', 'integer', '300', 'How long a locked dashboard account refuses sign-in.', {
    min: 1,
    max: 86400,
  }),
  v('KB_API_URL', 'url', 'http://127.0.0.1:8080', 'Service URL used by `kb ingest`.'),
  v('KB_API_KEY', 'string', '', 'API key used by `kb ingest` (or pass `--key`).'),
] as const satisfies readonly ConfigVariable[];

type VariableName = (typeof CONFIG_VARIABLES)[number]['name'];

/** Reads and validates the configuration; throws one error listing every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const spec = new Map<string, ConfigVariable>(CONFIG_VARIABLES.map((c) => [c.name, c]));
  const raw = (name: VariableName): string => {
    const value = env[name];
    return value === undefined || value === '' ? (spec.get(name)?.default ?? '') : value.trim();
  };
  const str = (name: VariableName): string => raw(name);
  const opt = (name: VariableName): string | null => {
    const value = raw(name);
    return value === '' ? null : value;
  };
  const url = (name: VariableName): string | null => {
    const value = opt(name);
    if (value === null) return null;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}: "${value}" is not an http(s) URL`);
      return null;
    }
  };
  const int = (name: VariableName): number => {
    const c = spec.get(name) as ConfigVariable;
    const value = raw(name);
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) {
      problems.push(`${name}: "${value}" is not an integer`);
      return Number(c.default);
    }
    if ((c.min !== undefined && n < c.min) || (c.max !== undefined && n > c.max)) {
      problems.push(`${name}: ${n} is outside ${c.min ?? '-∞'}..${c.max ?? '∞'}`);
      return Number(c.default);
    }
    return n;
  };
  const optInt = (name: VariableName): number | null => (raw(name) === '' ? null : int(name));
  const bool = (name: VariableName): boolean => {
    const value = raw(name).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    problems.push(`${name}: "${value}" is not a boolean (true/false)`);
    return false;
  };
  const oneOf = <T extends string>(name: VariableName): T => {
    const c = spec.get(name) as ConfigVariable;
    const value = raw(name);
    if (!c.values?.includes(value)) {
      problems.push(`${name}: "${value}" is not one of ${c.values?.join(', ')}`);
      return c.default as T;
    }
    return value as T;
  };
  const list = (name: VariableName): string[] =>
    raw(name)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);

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

/** The per-user model cache: `$XDG_CACHE_HOME/kb-document-service/models`, else under `~/.cache`. */
function defaultModelCache(env: Readonly<Record<string, string | undefined>>): string {
  const cacheHome = env.XDG_CACHE_HOME?.trim() || path.join(env.HOME?.trim() || os.homedir(), '.cache');
  return path.join(cacheHome, 'kb-document-service', 'models');
}

/** A configuration for tests and tools: defaults, overridden by `overrides` (variable names). */
export function configFrom(overrides: Partial<Record<VariableName, string>> = {}): Config {
  return loadConfig({ ...overrides });
}
