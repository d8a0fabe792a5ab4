import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { EMBEDDING_PROVIDERS, LOG_LEVELS, RUNTIMES, VECTOR_QUANTIZATIONS } from './config-values.ts';

/**
 * The shape of a loaded configuration as a TypeBox schema: a union discriminated on `runtime`.
 * The distributed branch requires the engine URLs the embedded branch may leave null, so code
 * that holds a {@link DistributedConfig} reads them without checking again.
 */

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** Settings both runtimes share. */
const sharedProperties = {
  host: Type.String(),
  port: Type.Integer(),
  dataDir: Type.String(),
  logLevel: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level))),
  problemBaseUrl: NullableString,
  bootstrapKey: Type.Boolean(),
  topicPrefix: Type.String(),
  maxUploadBytes: Type.Integer(),
  /** Time a request (headers and body) has to arrive completely; then 408. */
  requestTimeoutMs: Type.Integer(),
  /** How often the object store is swept for leftovers of crashes (0: only at start-up). */
  sweepIntervalMs: Type.Integer(),
  /** How often a process running the parse stage looks for versions left pending without their event (0: never). */
  strandedCheckMs: Type.Integer(),
  /** How long a version stays pending, with the parse stage caught up, before it counts as left without its event. */
  strandedAfterMs: Type.Integer(),
  /** Uploads (POST/PUT with a file) one API key may have in progress at once in one API process. */
  maxConcurrentUploads: Type.Integer(),
  /**
   * Ingestion backlog (versions accepted, not yet completed or failed) at which writes that queue
   * ingestion are refused: per workspace (429) and over every workspace (503); 0: no bound.
   */
  backlog: Type.Object({ maxPerWorkspace: Type.Integer(), maxTotal: Type.Integer() }),
  /** Sources of synchronisation. */
  sources: Type.Object({
    /** Directories folder sources may read under, each granted to a workspace or to every one (`*`). */
    folderRoots: Type.Array(Type.Object({ workspace: Type.String(), path: Type.String() })),
    /** Time one item of a folder source may take to read, from its opening. */
    itemTimeoutMs: Type.Integer(),
    maxDeleteFraction: Type.Number({ minimum: 0, maximum: 1 }),
    runStaleMs: Type.Integer(),
    /** Key that seals stored credentials; null: none can be stored. */
    secretKey: NullableString,
    fetchTimeoutMs: Type.Integer(),
  }),
  kafka: Type.Object({
    brokers: Type.Array(Type.String()),
    clientId: Type.String(),
    partitions: Type.Integer(),
    partitionConcurrency: Type.Integer(),
    keyConcurrency: Type.Integer(),
    commitIntervalMs: Type.Integer(),
    minFetchBytes: Type.Integer(),
    fetchMaxWaitMs: Type.Integer(),
  }),
  embedding: Type.Object({
    provider: Type.Union(EMBEDDING_PROVIDERS.map((name) => Type.Literal(name))),
    batchSize: Type.Integer(),
    /** Embedding calls of the embed stage in flight at once per process. */
    concurrency: Type.Integer(),
    transformersModel: Type.String(),
    /** Folder holding `<model id>/` (the model cache unless configured). */
    transformersModelPath: Type.String(),
    transformersAllowRemote: Type.Boolean(),
    /** ONNX Runtime intra-op threads of the `transformers` provider. */
    threads: Type.Integer(),
    /** Whether a missing catalogue model may be fetched from `modelRepositoryUrl`. */
    modelFetch: Type.Boolean(),
    modelRepositoryUrl: Type.String(),
    cohereApiKey: NullableString,
    cohereModel: Type.String(),
    cohereBaseUrl: NullableString,
    /** `openai` provider: the API base URL (`…/v1`); requests go to `<url>/embeddings`. */
    url: NullableString,
    /** `openai` provider: the model name the server knows. */
    model: NullableString,
    apiKey: NullableString,
    /** `openai` provider: the vector size the server must answer; null: whatever its first answer has. */
    dimensions: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    /** `openai` provider: bound of one request, body included. */
    timeoutMs: Type.Integer(),
  }),
  /** The embedded runtime's HNSW vector index (null: exact scans only). */
  vectorIndex: Type.Union([
    Type.Object({
      exactBelow: Type.Integer(),
      expansionSearch: Type.Integer(),
      quantization: Type.Union(VECTOR_QUANTIZATIONS.map((kind) => Type.Literal(kind))),
    }),
    Type.Null(),
  ]),
  /** The embedded runtime's keyword index (null: exact FTS5 queries only). */
  keywordIndex: Type.Union([
    Type.Object({ syncBelow: Type.Integer(), exactBelow: Type.Integer(), threads: Type.Integer() }),
    Type.Null(),
  ]),
  /** Hybrid search's default weight of the semantic ranking, 0–100 (the keyword ranking gets the rest). */
  search: Type.Object({ semanticWeightPercent: Type.Integer() }),
  chunking: Type.Object({ chunkTokens: Type.Integer(), overlapTokens: Type.Integer(), maxChunks: Type.Integer() }),
  /**
   * Fair scheduling of the embed stage: a document's chunks are embedded at most `sliceChunks` per
   * turn; the rest waits behind the events queued meanwhile on the same partition.
   */
  embedSliceChunks: Type.Integer(),
  /** …and for at most about `embedSliceMs` (at least one provider batch), waiting for turns included. */
  embedSliceMs: Type.Integer(),
  /** Embedded runtime: documents of one partition a stage consumer of the SQLite log handles at once. */
  logKeyConcurrency: Type.Integer(),
  /** How long SIGTERM waits for the stages to reach a batch boundary before the process exits anyway. */
  shutdownGraceMs: Type.Integer(),
  /** How long start-up retries a set-up step an engine is not ready for yet. */
  startupTimeoutMs: Type.Integer(),
  /** The embedded data volume: free space kept for the pipeline, and the reserve that lets deletes run on a full disk. */
  storage: Type.Object({ minFreeBytes: Type.Integer(), reserveBytes: Type.Integer() }),
  outbound: Type.Object({ allowPrivate: Type.Boolean() }),
  /** Webhook deliveries: the first retry delay, when a failing endpoint is disabled, whether `kb serve` dispatches. */
  webhooks: Type.Object({
    retryBaseMs: Type.Integer(),
    timeoutMs: Type.Integer(),
    disableAfterMs: Type.Integer(),
    /** How long delivered and given-up deliveries (and their attempts) are kept. */
    deliveryRetentionMs: Type.Integer(),
    dispatch: Type.Boolean(),
  }),
  /** The event stream (`GET /api/v1/events`). */
  events: Type.Object({ heartbeatMs: Type.Integer(), maxStreamsPerKey: Type.Integer() }),
  /** `Idempotency-Key`: how long an answer is kept, how long a request waits for one still running. */
  idempotency: Type.Object({ ttlMs: Type.Integer(), waitMs: Type.Integer() }),
  parsing: Type.Object({
    threads: Type.Integer(),
    taskTimeoutMs: Type.Integer(),
    maxHeapMb: Type.Integer(),
    ocr: Type.Boolean(),
  }),
  retry: Type.Object({
    maxAttempts: Type.Integer(),
    baseDelayMs: Type.Integer(),
    maxDelayMs: Type.Integer(),
    /** How long one delivery of a stage event waits in place for an unavailable engine or storage. */
    engineWaitMs: Type.Integer(),
  }),
  rateLimit: Type.Object({ syncIntervalMs: Type.Integer(), soloSyncIntervalMs: Type.Integer() }),
  keyCacheMs: Type.Integer(),
  /** Scoped tokens: the signing key (null: the embedded runtime keeps its own) and the longest lifetime. */
  tokens: Type.Object({ secret: NullableString, maxTtlSeconds: Type.Integer() }),
  /** How often an API process writes the last-use times of keys. */
  keyTouchMs: Type.Integer(),
  /**
   * Prometheus `/metrics`: a separate listener on `host:port` when `port` is set (`kb worker` uses
   * 9464 when it is not), else the API port; `token`, when set, is required as a bearer token.
   */
  metrics: Type.Object({
    token: NullableString,
    host: Type.String(),
    port: Type.Union([Type.Integer(), Type.Null()]),
  }),
  /** Dashboard accounts and sessions. */
  dashboard: Type.Object({
    /** On first start with no account at all, create an owner of workspace `default` and print its password. */
    bootstrapAccount: Type.Boolean(),
    /** How long a signed-in session lasts, in seconds. */
    sessionTtlSeconds: Type.Integer(),
    /** Whether the session cookie carries `Secure` (only sent over HTTPS). */
    secureCookie: Type.Boolean(),
    /** Wrong passwords in a row (per account) before sign-in is locked. */
    maxFailedSignIns: Type.Integer(),
    /** How long a locked account refuses sign-in, in seconds. */
    lockoutSeconds: Type.Integer(),
  }),
  /** Where CLI commands that talk HTTP (`kb ingest`) find the service. */
  client: Type.Object({ url: Type.String(), apiKey: NullableString }),
} satisfies TProperties;

/** The engine settings, with the URLs as `url` (required) or nullable (optional in that runtime). */
const engineProperties = <U extends TSchema>(url: U) => ({
  schemaRegistryUrl: url,
  s3: Type.Object({
    endpoint: url,
    accessKey: Type.String(),
    secretKey: Type.String(),
    region: Type.String(),
    bucket: Type.String(),
  }),
  opensearch: Type.Object({
    url,
    indexPrefix: Type.String(),
    efSearch: Type.Integer(),
    shards: Type.Integer(),
    replicas: Type.Integer(),
    changePollMs: Type.Integer(),
    documentsRefreshMs: Type.Integer(),
  }),
  clickhouse: Type.Object({
    url,
    user: Type.String(),
    password: Type.String(),
    database: Type.String(),
    /** How long audit entries wait in the insert buffer. */
    auditFlushMs: Type.Integer(),
  }),
});

/** One process with SQLite and files; the distributed engines' URLs may be unset. */
export const EmbeddedConfigSchema = Type.Object({
  runtime: Type.Literal('embedded'),
  ...sharedProperties,
  ...engineProperties(NullableString),
});

/** Kafka + schema registry, S3/MinIO, OpenSearch, ClickHouse: every engine URL is set. */
export const DistributedConfigSchema = Type.Object({
  runtime: Type.Literal('distributed'),
  ...sharedProperties,
  ...engineProperties(Type.String()),
});

export const ConfigSchema = Type.Union([EmbeddedConfigSchema, DistributedConfigSchema]);

/** Objects read-only at every level (arrays are kept as they are). */
type ReadonlyDeep<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> }
    : T;

export type EmbeddedConfig = ReadonlyDeep<Static<typeof EmbeddedConfigSchema>>;
export type DistributedConfig = ReadonlyDeep<Static<typeof DistributedConfigSchema>>;
/** The one validated configuration of the service; narrow on `runtime` for the engine URLs. */
export type Config = EmbeddedConfig | DistributedConfig;
export type RuntimeKind = Config['runtime'];
// The catalogue's runtimes are the schema's (a compile-time check).
RUNTIMES satisfies readonly RuntimeKind[];
export type EmbeddingProviderName = Config['embedding']['provider'];
export type VectorQuantization = (typeof VECTOR_QUANTIZATIONS)[number];

/** The schema of the branch `runtime` selects. */
export function configSchemaOf(runtime: RuntimeKind): TObject {
  return runtime === 'distributed' ? DistributedConfigSchema : EmbeddedConfigSchema;
}
