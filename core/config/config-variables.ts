/**
 * The catalogue of configuration variables: name, kind, default, bounds and the description that
 * also feeds the README's table. `loadConfig` in `config.ts` reads them.
 */

import { EMBEDDING_PROVIDERS, LOG_LEVELS, RUNTIMES, VECTOR_QUANTIZATIONS } from './config.schema.ts';

export type Kind = 'string' | 'integer' | 'boolean' | 'enum' | 'list' | 'url';

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
    { values: RUNTIMES },
  ),
  v('HOST', 'string', '127.0.0.1', 'Address the HTTP API binds to.'),
  v('PORT', 'integer', '8080', 'Port the HTTP API listens on.', { min: 0, max: 65535 }),
  v(
    'KB_DATA_DIR',
    'string',
    './data',
    'Data directory of the embedded runtime (SQLite databases, stored files). Relative paths resolve from the working directory. Created readable by its owner only (0700; the databases 0600).',
  ),
  v('KB_LOG_LEVEL', 'enum', 'info', 'Log level.', {
    values: LOG_LEVELS,
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
    'KB_MIN_FREE_BYTES',
    'integer',
    '104857600',
    'Embedded runtime: free space the data volume keeps. An upload that would leave less is refused with 507 `insufficient-storage` (before the disk is completely full, so versions already accepted can still be ingested), and the readiness check `disk` reports `degraded` below it.',
    { min: 0 },
  ),
  v(
    'KB_OUTBOUND_ALLOW_PRIVATE',
    'boolean',
    'false',
    'Let requests the service makes of its own accord (sync sources fetching pages or objects, webhook deliveries) reach loopback, private, link-local and other non-public addresses. Off by default so a URL a user supplies cannot reach the network the service runs in; turn it on for on-premise stores and receivers.',
  ),
  v(
    'KB_WEBHOOK_RETRY_BASE_MS',
    'integer',
    '5000',
    'First retry delay of a failed webhook delivery. Later retries wait 60, 360, 1440, 3600, 7200 and 7200 times as long (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default: about a day), each ±20 % jitter; then the delivery is given up.',
    { min: 1 },
  ),
  v(
    'KB_WEBHOOK_TIMEOUT_MS',
    'integer',
    '10000',
    'Time a webhook receiver has to answer one delivery attempt (the whole exchange); a slower answer counts as a failed attempt and is retried.',
    { min: 100 },
  ),
  v(
    'KB_WEBHOOK_DISABLE_AFTER_MS',
    'integer',
    '432000000',
    'A webhook endpoint whose deliveries have all failed for this long (5 days by default) is disabled, with the reason shown on it.',
    { min: 1 },
  ),
  v(
    'KB_WEBHOOK_DISPATCH',
    'boolean',
    'true',
    'Whether `kb serve` runs the webhook dispatcher (a consumer of the notification topic that delivers to the endpoints). On the distributed runtime keep it on in one API process: two dispatchers on one store may both attempt a delivery (still at-least-once, but more duplicates).',
  ),
  v(
    'KB_EVENTS_HEARTBEAT_MS',
    'integer',
    '15000',
    'How often `GET /api/v1/events` sends a comment line on an idle stream, so proxies keep the connection open and clients notice a dead one.',
    { min: 100 },
  ),
  v(
    'KB_STORAGE_RESERVE_BYTES',
    'integer',
    '33554432',
    'Embedded runtime: size of a reserve file kept in the data directory while there is room. When the disk is so full that a delete or purge fails, the reserve is released so the delete can go through (space can always be freed through the API); it is made again once there is room. 0 keeps none.',
    { min: 0 },
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
  v(
    'KB_SOURCE_FOLDER_ROOTS',
    'string',
    '',
    'Absolute directories, separated by `:`, under which `folder` sources may read (symlinks resolved; `..` refused). Empty: no folder source is allowed.',
  ),
  v(
    'KB_SOURCE_MAX_DELETE_FRACTION',
    'string',
    '0.15',
    "A sync run that would delete more than this fraction (0 to 1) of its source's documents deletes none and reports them as `deletions_held`, unless asked with `allow_mass_delete=true`.",
  ),
  v(
    'KB_SOURCE_RUN_STALE_MS',
    'integer',
    '60000',
    'A sync run records a heartbeat several times within this interval; a run whose heartbeat is older (its process stopped) is taken over by the next sync request or schedule, and restarted at start-up.',
    { min: 1000 },
  ),
  v(
    'KB_SOURCE_SECRET_KEY',
    'string',
    '',
    'Key (32 bytes: 64 hex digits or base64) that encrypts the credentials of `s3` sources at rest (AES-256-GCM). Empty: sources cannot store credentials (public buckets only).',
  ),
  v(
    'KB_SOURCE_FETCH_TIMEOUT_MS',
    'integer',
    '30000',
    'Time one request of a sync to a web page, sitemap or S3 store may take, body included.',
    { min: 100 },
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
    'KB_KAFKA_COMMIT_INTERVAL_MS',
    'integer',
    '200',
    'How long a stage consumer gathers the offsets of handled events before committing them in one request; a crashed worker redoes at most this much handled work, 0 commits at once (distributed).',
    { min: 0, max: 60_000 },
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
  v(
    'KB_OPENSEARCH_DOCUMENTS_REFRESH_MS',
    'integer',
    '250',
    "Refresh interval of the OpenSearch documents index (distributed): an upload through another API process, and a status a worker sets, reach this process's lists with that refresh (neither forces one, and the stage does not wait for it).",
    { min: 50, max: 30000 },
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
    'KB_AUDIT_FLUSH_MS',
    'integer',
    '5000',
    'How long audit entries wait to be inserted into ClickHouse in one insert (or until 1,000 wait; distributed). ' +
      'The same process lists them at once and SIGTERM writes them; other processes see them up to this late, ' +
      'and a killed process loses at most this long of them.',
    { min: 100, max: 60000 },
  ),
  v(
    'KB_EMBEDDING_PROVIDER',
    'enum',
    'transformers',
    'Embedding provider: `transformers` (an ONNX model run locally; the default model is fetched once, then offline), `local` (small bundled model, no download), `cohere`.',
    { values: EMBEDDING_PROVIDERS },
  ),
  v('KB_EMBEDDING_BATCH_SIZE', 'integer', '32', 'Texts per embedding call (Cohere caps it at 96).', {
    min: 1,
    max: 1024,
  }),
  v(
    'KB_EMBEDDING_CONCURRENCY',
    'integer',
    '2',
    "Embedding calls of the embed stage one process makes at once. Callers beyond it wait in turns by workspace (the workspace whose calls took the least time goes first), so one workspace's bulk load does not queue another's documents behind it; raise it for a remote provider with capacity to spare.",
    { min: 1, max: 256 },
  ),
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
    'Embedded runtime: the HNSW query beam width (`expansion_search`) up to 100,000 vectors, growing with the logarithm of the index size beyond; a query of k candidates uses at least k.',
    { min: 1, max: 4096 },
  ),
  v(
    'KB_VECTOR_INDEX_QUANTIZATION',
    'enum',
    'i8',
    'Embedded runtime: how the HNSW index stores vectors: `i8` (a quarter of `f32`), `f16` or `f32`; results are scored with the full-precision vectors either way. A saved index of another kind is rebuilt at start.',
    { values: VECTOR_QUANTIZATIONS },
  ),
  v(
    'KB_KEYWORD_INDEX',
    'boolean',
    'true',
    'Embedded runtime: answer keyword queries through a full-text index (LanceDB, BM25 with top-k pruning) kept beside the database (false: exact FTS5 queries only).',
  ),
  v(
    'KB_KEYWORD_INDEX_SYNC_BELOW',
    'integer',
    '20000',
    'Embedded runtime: a backlog of at most this many chunk changes (or a keyword index rebuild of at most this many chunks) is applied before the keyword query that finds it; a larger one is applied in the background while keyword queries run exactly on FTS5.',
    { min: 0 },
  ),
  v(
    'KB_KEYWORD_INDEX_THREADS',
    'integer',
    '0',
    "Embedded runtime: threads of the keyword index's compute pool (0: one per core). At least 2 are used: with one, building its full-text index can stall.",
    { min: 0, max: 256 },
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
    'KB_STARTUP_TIMEOUT_MS',
    'integer',
    '60000',
    'How long a starting process keeps retrying a set-up step that fails because an engine is not ready yet (topics and schemas, indexes, tables, the bucket, joining consumer groups) before it exits, saying which engine. Set-up steps are idempotent: any number of processes may start at once.',
    { min: 0 },
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
    'KB_RATE_LIMIT_SOLO_SYNC_MS',
    'integer',
    '10000',
    'How often an API process that sees no other API process counting requests writes its rate-limit ' +
      'counts (distributed): once it sees another, it writes every KB_RATE_LIMIT_SYNC_MS; a usage read writes ' +
      'its own counts first. Equal to KB_RATE_LIMIT_SYNC_MS: always written every sync.',
    { min: 1000, max: 20000 },
  ),
  v(
    'KB_KEY_CACHE_MS',
    'integer',
    '2000',
    'How long an API process trusts a looked-up key before reading it again (revocation latency).',
    { min: 0, max: 5000 },
  ),
  v(
    'KB_KEY_TOUCH_MS',
    'integer',
    '30000',
    'How often an API process writes the last-use times of the keys it saw, in one write: its own key listings ' +
      'write them first, other processes (and `kb keys list`) see them up to this late. SIGTERM writes them.',
    { min: 1000, max: 300000 },
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
    'Wrong passwords in a row (at sign-in, or the current password when changing it) after which an account cannot sign in or change its password for `KB_SIGNIN_LOCKOUT_SECONDS`.',
    { min: 1, max: 100 },
  ),
  v('KB_SIGNIN_LOCKOUT_SECONDS', 'integer', '300', 'How long a locked dashboard account refuses sign-in.', {
    min: 1,
    max: 86400,
  }),
  v('KB_API_URL', 'url', 'http://127.0.0.1:8080', 'Service URL used by `kb ingest`.'),
  v('KB_API_KEY', 'string', '', 'API key used by `kb ingest` and `kb mcp` (or pass `--key`).'),
  v(
    'KB_KEY',
    'string',
    '',
    'API key used by `kb ingest` and `kb mcp` when `KB_API_KEY` is empty: the name the service suggests when it prints its first key (`export KB_KEY=…`).',
  ),
] as const satisfies readonly ConfigVariable[];

/** The name of one catalogued variable. */
export type VariableName = (typeof CONFIG_VARIABLES)[number]['name'];
