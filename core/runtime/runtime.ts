import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import type { Config } from '../config/config.ts';
import { STAGE_NAMES, type StageName, type Topics, topicNames, topicSpecs } from '../events/events.ts';
import { sourceTopicSpecs } from '../events/source-events.ts';
import type { Metrics } from '../metrics/metrics.port.ts';
import { observeDeadLetters, observeEmbeddings, observeRateLimiter, observeStage } from '../metrics/observed-ports.ts';
import { createPrometheusMetrics } from '../metrics/prometheus.metrics.ts';
import { readStageLag } from '../metrics/stage-lag.ts';
import type { Logger } from '../model/logger.model.ts';
import type { OutboundPolicy, OutboundResolver } from '../outbound/outbound-policy.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import type { Subscription } from '../ports/message-log/message-log.port.ts';
import { createAccountsService } from '../services/accounts.service.ts';
import { createAuditService } from '../services/audit.service.ts';
import { createChunksService } from '../services/chunks.service.ts';
import { createDeadLettersService, deadLetterReadiness } from '../services/dead-letters.service.ts';
import { createDocumentWritesService } from '../services/document-writes.service.ts';
import { createDocumentsService } from '../services/documents.service.ts';
import { createEventStreamService } from '../services/event-stream.service.ts';
import { createHealthService } from '../services/health.service.ts';
import { createIdempotencyService } from '../services/idempotency.service.ts';
import { createIngestionBacklogService } from '../services/ingestion-backlog.service.ts';
import { createKeysService } from '../services/keys.service.ts';
import { createLeftoversService } from '../services/leftovers.service.ts';
import { createNotificationOutboxService } from '../services/notification-outbox.service.ts';
import { createPipelineOverviewService } from '../services/pipeline-overview.service.ts';
import { createRateLimiter } from '../services/rate-limiter.ts';
import { createReindexService } from '../services/reindex.service.ts';
import { createRetentionService } from '../services/retention.service.ts';
import { createScopedTokensService } from '../services/scoped-tokens.service.ts';
import { createSearchService } from '../services/search.service.ts';
import type { Services } from '../services/services.ts';
import { createStrandedVersionsService } from '../services/stranded-versions.service.ts';
import { createUploadStagingService } from '../services/upload-staging.service.ts';
import { createUsageService } from '../services/usage.service.ts';
import { createVersionsService } from '../services/versions.service.ts';
import type { StageDeps } from '../stages/pipeline-stages.ts';
import { createFairGate } from '../util/fair-gate.ts';
import { retryStartUp } from '../util/start-up-retry.ts';
import type { WebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { createWebhooksService } from '../webhooks/webhooks.service.ts';
import type { Ports } from './runtime-ports.ts';
import { createSourceParts } from './source-parts.ts';
import { tokenSecret } from './token-secret.ts';

export type { Ports } from './runtime-ports.ts';

export interface Runtime {
  readonly config: Config;
  readonly version: string;
  readonly logger: Logger & { child?: unknown };
  readonly ports: Ports;
  readonly topics: Topics;
  readonly services: Services;
  /** What this process reports on `/metrics`. */
  readonly metrics: Metrics;
  /** Stages running in this process. */
  readonly stages: readonly StageName[];
  startStages(names: readonly StageName[]): Promise<void>;
  /**
   * Stops the stages and the webhook dispatcher at their next batch boundary (at once: the first
   * step runs before this returns), and resolves when they have stopped; `close` does it too.
   */
  stopIngestion(): Promise<void>;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Stages to run in this process: `all` (embedded `kb serve`), a subset (`kb worker`), or none. */
  readonly stages?: 'all' | 'none' | readonly StageName[];
  readonly logger?: Logger;
  /** Use this provider instead of the configured one (benchmarks and tests that count calls). */
  readonly embeddings?: EmbeddingProvider;
  /**
   * Sweep the object store for what crashes left behind, once now (in the background) and every
   * `KB_SWEEP_INTERVAL_MS` (`kb serve` and `kb worker` do; one-shot commands do not).
   */
  readonly sweepLeftovers?: boolean;
  /**
   * Embedded runtime: open the keyword index at start-up (caught up, or rebuilt in the background)
   * and apply new chunk changes to it as they come (`kb serve` does: it answers the queries).
   */
  readonly followKeywordIndex?: boolean;
  /**
   * Run sync runs of sources: on their schedules, and on the distributed runtime the sync
   * requests of the message log; on the embedded one, resume at start-up the syncs the last
   * process left going (`kb serve` and `kb worker` do). Sync requests made through this
   * process's API run in it on the embedded runtime whatever this says.
   */
  readonly runSources?: boolean;
  /**
   * Run the webhook dispatcher in this process: consume the notification topic and deliver to the
   * endpoints (`kb serve` does, unless `KB_WEBHOOK_DISPATCH=false`).
   */
  readonly dispatchWebhooks?: boolean;
  /**
   * Publish the notifications of changes written that were left pending (a process killed, or the
   * log down, before they were published): at start-up and then every 30 s, sooner after a
   * failure (`kb serve` does: every process that serves writes should). Without it, a process
   * publishes again only what its own writes could not.
   */
  readonly drainNotifications?: boolean;
  /**
   * Resolve the host names of the service's own requests (sources, webhooks) with this instead of
   * the system resolver; the outbound policy applies to what it answers (tests that point a name
   * at a chosen address).
   */
  readonly resolveHost?: OutboundResolver;
}

export function serviceVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * The composition root: builds every adapter for the configured runtime, the services on top,
 * makes sure the topics exist, and starts the requested stages.
 */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger: Logger = options.logger ?? pino({ level: config.logLevel, base: { service: 'kb' } });
  // Each runtime's adapters are imported by the processes that use them only.
  const ports =
    config.runtime === 'embedded'
      ? await (await import('./embedded-ports.ts')).createEmbeddedPorts(config, options.embeddings, logger, {
          followKeywordIndex: options.followKeywordIndex ?? false,
        })
      : await (await import('./distributed-ports.ts')).createDistributedPorts(config, options.embeddings);
  const topics = topicNames(config.topicPrefix);
  try {
    await retryStartUp(
      ports.log.kind === 'Kafka' ? 'Kafka or the schema registry' : 'The message log',
      'create the topics and register their schemas',
      () =>
        ports.log.ensureTopics([
          ...topicSpecs(config.topicPrefix, config.kafka.partitions),
          ...sourceTopicSpecs(config.topicPrefix, config.kafka.partitions),
        ]),
      { boundMs: config.startupTimeoutMs },
    );
  } catch (error) {
    await ports.close();
    throw error;
  }

  const backlog = createIngestionBacklogService({ store: ports.documents, limits: config.backlog, logger });
  const metrics = createPrometheusMetrics({
    probe: {
      stageLag: () => readStageLag(ports.logAdmin, topics),
      documentsByStatus: () => ports.documents.countDocumentsByStatus(),
      webhooksPending: () => ports.webhooks.pendingSummary(),
      deadLetters: () => deadLetters.counts(),
      backlog: () => backlog.view(),
    },
  });
  const keys = createKeysService({
    accountStore: ports.accountStore,
    cacheMs: config.keyCacheMs,
    touchIntervalMs: config.keyTouchMs,
  });
  const limiter = createRateLimiter({
    accountStore: ports.accountStore,
    syncIntervalMs: config.rateLimit.syncIntervalMs,
    // One process alone writes its counts less often (ClickHouse inserts); embedded is always alone.
    ...(config.runtime === 'distributed' ? { soloSyncIntervalMs: config.rateLimit.soloSyncIntervalMs } : {}),
    logger,
  });
  const rateLimiter = observeRateLimiter(limiter, metrics);
  const embedded = config.runtime === 'embedded';
  const disk = ports.disk;
  const writeDeps = {
    documents: ports.documents,
    objects: ports.objects,
    accountStore: ports.accountStore,
    log: ports.log,
    topics,
  };
  const documents = createDocumentsService({
    documents: ports.documents,
    objects: ports.objects,
    sourceItems: (ids) => ports.sources.itemKeysOf(ids),
  });
  const deadLetters = createDeadLettersService({
    log: ports.log,
    logAdmin: ports.logAdmin,
    documents: ports.documents,
    topics,
    logger,
    claims: ports.idempotency,
    leaseMs: config.requestTimeoutMs,
    keepMs: config.idempotency.ttlMs,
  });
  const health = createHealthService({
    version: serviceVersion(),
    checks: [
      { name: 'database', engine: embedded ? 'SQLite' : 'ClickHouse', ping: () => ports.accountStore.ping() },
      { name: 'vector_store', engine: embedded ? 'SQLite-vec' : 'OpenSearch', ping: () => ports.documents.ping() },
      { name: 'message_log', engine: ports.log.kind, ping: () => ports.log.ping() },
      { name: 'object_store', engine: embedded ? 'filesystem' : 'S3', ping: () => ports.objects.ping() },
      ...(disk ? [{ name: 'disk', engine: 'data volume', ping: disk.probe }] : []),
      { name: 'dead_letters', engine: 'dead-letter topics', ping: () => deadLetterReadiness(deadLetters) },
    ],
  });
  const uploads = createUploadStagingService({
    objects: ports.objects,
    maxUploadBytes: config.maxUploadBytes,
    ...(disk ? { admit: disk.admit } : {}),
  });
  const outbox = createNotificationOutboxService({
    store: ports.documents,
    log: ports.log,
    topic: topics.notification,
    logger,
  });
  const documentWrites = createDocumentWritesService({
    ...writeDeps,
    ...(disk ? { freeing: disk.freeing } : {}),
    logger,
    outbox,
  });
  const outbound: OutboundPolicy = options.resolveHost
    ? { ...config.outbound, resolve: options.resolveHost }
    : config.outbound;
  const sourceParts = createSourceParts({ config, ports, uploads, documentWrites, logger, outbound });
  const idempotency = createIdempotencyService({
    store: ports.idempotency,
    ttlMs: config.idempotency.ttlMs,
    // A claim outlives any request that could still be running: the body has arrived by then.
    leaseMs: config.requestTimeoutMs,
    waitMs: config.idempotency.waitMs,
  });
  const services: Services = {
    uploads,
    documents,
    documentWrites,
    sources: sourceParts.sources,
    versions: createVersionsService({ ...writeDeps, backlog }),
    chunks: createChunksService({ documents: ports.documents, objects: ports.objects }),
    search: createSearchService({
      documents: ports.documents,
      getEmbeddings: ports.getEmbeddings,
      defaultWeights: {
        semantic: config.search.semanticWeightPercent / 100,
        keyword: 1 - config.search.semanticWeightPercent / 100,
      },
    }),
    audit: createAuditService({ accountStore: ports.accountStore }),
    keys,
    accounts: createAccountsService({
      accountStore: ports.accountStore,
      sessionTtlSeconds: config.dashboard.sessionTtlSeconds,
      maxFailedSignIns: config.dashboard.maxFailedSignIns,
      lockoutSeconds: config.dashboard.lockoutSeconds,
    }),
    rateLimiter,
    health,
    usage: createUsageService({ accountStore: ports.accountStore, writePending: () => limiter.flush() }),
    pipeline: createPipelineOverviewService({
      logAdmin: ports.logAdmin,
      topics,
      documents,
      health,
      deadLetters,
      backlog,
    }),
    deadLetters,
    reindex: createReindexService({
      documents: ports.documents,
      getEmbeddings: ports.getEmbeddings,
      batchSize: config.embedding.batchSize,
    }),
    retention: createRetentionService({ documents: ports.documents, accountStore: ports.accountStore }),
    webhooks: createWebhooksService({
      store: ports.webhooks,
      policy: outbound,
      wake: () => dispatcher?.wake(),
    }),
    events: createEventStreamService({
      logTail: ports.logTail,
      topic: topics.notification,
      heartbeatMs: config.events.heartbeatMs,
      maxStreamsPerKey: config.events.maxStreamsPerKey,
      documents: ports.documents,
    }),
    idempotency,
    backlog,
    tokens: createScopedTokensService({ secret: tokenSecret(config), maxTtlSeconds: config.tokens.maxTtlSeconds }),
  };
  let dispatcher: WebhookDispatcher | undefined;

  const running: Subscription[] = [];
  const stageNames: StageName[] = [];
  const startStages = async (names: readonly StageName[]) => {
    const fresh = names.filter((n) => !stageNames.includes(n));
    if (fresh.length === 0) return;
    // The stages' code is loaded by the processes that run stages, not by one-shot commands.
    const [{ createStages }, { runStage }] = await Promise.all([
      import('../stages/pipeline-stages.ts'),
      import('../stages/stage-runner.ts'),
    ]);
    const getEmbeddings = async () => observeEmbeddings(await ports.getEmbeddings(), metrics);
    const definitions = createStages({ ...stageDependencies(config, ports, topics), getEmbeddings }, fresh);
    const log = observeDeadLetters(ports.log, topics, metrics);
    for (const stage of definitions) {
      running.push(
        await retryStartUp(
          ports.log.kind,
          `start the ${stage.name} stage's consumer`,
          () =>
            runStage(observeStage(stage, metrics), {
              log,
              documents: ports.documents,
              topics,
              retry: config.retry,
              logger,
            }),
          { boundMs: config.startupTimeoutMs },
        ),
      );
      stageNames.push(stage.name);
    }
    if (fresh.includes('parse')) watchStrandedVersions();
  };

  // A process running the parse stage queues again the versions a killed process left pending
  // without their event (see `stranded-versions.service.ts`).
  let strandedTimer: NodeJS.Timeout | undefined;
  let strandedCheck: Promise<unknown> = Promise.resolve();
  const watchStrandedVersions = () => {
    if (config.strandedCheckMs <= 0 || strandedTimer !== undefined) return;
    const stranded = createStrandedVersionsService({
      documents: ports.documents,
      log: ports.log,
      logAdmin: ports.logAdmin,
      topics,
      olderThanMs: config.strandedAfterMs,
      logger,
    });
    strandedTimer = setInterval(() => {
      strandedCheck = strandedCheck
        .then(() => stranded.requeue())
        .catch((error: unknown) =>
          logger.warn({ err: String(error) }, 'the check for versions left without their event failed; next time'),
        );
    }, config.strandedCheckMs);
    strandedTimer.unref();
  };
  const requested = options.stages ?? 'none';
  const initial = requested === 'all' ? STAGE_NAMES : requested === 'none' ? [] : requested;

  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  if (options.sweepLeftovers) {
    const leftovers = createLeftoversService({
      objects: ports.objects,
      documents: ports.documents,
      olderThanMs: config.requestTimeoutMs,
      logger,
    });
    const sweep = () => {
      sweeping = sweeping
        .then(() => leftovers.sweep())
        .catch((error: unknown) => logger.warn({ err: String(error) }, 'the sweep for leftovers failed; next time'))
        .then(() => idempotency.sweep())
        .catch((error: unknown) =>
          logger.warn({ err: String(error) }, 'the sweep of expired idempotency keys failed; next time'),
        );
    };
    sweep();
    if (config.sweepIntervalMs > 0) {
      sweepTimer = setInterval(sweep, config.sweepIntervalMs);
      sweepTimer.unref();
    }
  }

  if (options.drainNotifications) outbox.start();
  if (options.runSources) await sourceParts.start();
  const startDispatcher = async () => {
    const { startWebhookDispatcher } = await import('../webhooks/webhook-dispatcher.ts');
    dispatcher = await retryStartUp(
      ports.log.kind,
      "start the webhook dispatcher's consumer",
      () =>
        startWebhookDispatcher({
          log: ports.log,
          store: ports.webhooks,
          topic: topics.notification,
          groupId: topics.webhooksGroup,
          policy: outbound,
          retryBaseMs: config.webhooks.retryBaseMs,
          timeoutMs: config.webhooks.timeoutMs,
          disableAfterMs: config.webhooks.disableAfterMs,
          deliveryRetentionMs: config.webhooks.deliveryRetentionMs,
          userAgent: `kb-document-service/${serviceVersion()} (webhooks)`,
          logger,
          observer: { delivery: (outcome, lag) => metrics.webhookDelivery(outcome, lag) },
        }),
      { boundMs: config.startupTimeoutMs },
    );
  };

  let closed = false;
  let ingestionStopped: Promise<void> | null = null;
  const runtime: Runtime = {
    config,
    version: serviceVersion(),
    logger,
    ports,
    topics,
    services,
    metrics,
    stages: stageNames,
    startStages,
    stopIngestion() {
      clearInterval(strandedTimer);
      ingestionStopped ??= Promise.allSettled([...running.map((s) => s.stop()), dispatcher?.stop()]).then(() => {});
      return ingestionStopped;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweepTimer);
      const stopping = runtime.stopIngestion();
      await sourceParts.close();
      await stopping;
      await sweeping;
      await strandedCheck;
      await outbox.close();
      await services.events.close();
      await rateLimiter.close();
      await keys.close();
      await ports.close();
    },
  };
  try {
    await startStages(initial);
    if (options.dispatchWebhooks) await startDispatcher();
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return runtime;
}

/** What the pipeline stages need from a runtime's configuration and ports. */
export function stageDependencies(config: Config, ports: Ports, topics: Topics): StageDeps {
  return {
    log: ports.log,
    objects: ports.objects,
    documents: ports.documents,
    topics,
    chunking: config.chunking,
    embeddingBatchSize: config.embedding.batchSize,
    embedSliceChunks: config.embedSliceChunks,
    embedSliceMs: config.embedSliceMs,
    embeddingGate: createFairGate({ slots: config.embedding.concurrency }),
    getParser: ports.getParser,
    getEmbeddings: ports.getEmbeddings,
  };
}

export function dataPath(config: Config, ...parts: string[]): string {
  return path.join(config.dataDir, ...parts);
}
