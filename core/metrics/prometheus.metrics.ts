import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { engineRequestCounts } from '../util/engine-requests.ts';
import type { DeploymentProbe, Metrics } from './metrics.port.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STAGE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 96, 128, 256];

export interface PrometheusMetricsOptions {
  /** Reads deployment-wide gauges at scrape time; omitted, they are not exported. */
  readonly probe?: DeploymentProbe;
  /** Labels on every series (e.g. `{ role: 'worker' }`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Process metrics (CPU, memory, event loop, GC) — on by default. */
  readonly processMetrics?: boolean;
}

/** {@link Metrics} on a prom-client registry of its own (one per runtime). */
export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.labels) registry.setDefaultLabels({ ...options.labels });
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'kb_' });
  const registers = [registry];

  const httpRequests = new Counter({
    name: 'kb_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'kb_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const stageCounter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['stage'] as const, registers });
  const processed = stageCounter('kb_stage_messages_processed_total', 'Events a stage handled successfully.');
  const failed = stageCounter(
    'kb_stage_messages_failed_total',
    'Stage attempts that threw (each attempt counts; see retried and dead-lettered).',
  );
  const retried = stageCounter('kb_stage_messages_retried_total', 'Stage attempts after the first on the same event.');
  const deadLettered = stageCounter(
    'kb_stage_messages_dead_lettered_total',
    'Events a stage gave up on and sent to its dead-letter topic.',
  );
  const handlerDuration = new Histogram({
    name: 'kb_stage_handler_duration_seconds',
    help: 'Time of one stage attempt, by outcome.',
    labelNames: ['stage', 'outcome'] as const,
    buckets: STAGE_BUCKETS,
    registers,
  });
  const embeddedChunks = new Counter({
    name: 'kb_embedding_chunks_total',
    help: 'Texts sent to the embedding provider (rate() of it is chunks per second).',
    registers,
  });
  const embeddingBatches = new Histogram({
    name: 'kb_embedding_batch_size',
    help: 'Texts per call to the embedding provider.',
    buckets: BATCH_BUCKETS,
    registers,
  });
  const rateLimited = new Counter({
    name: 'kb_rate_limit_rejections_total',
    help: 'Requests refused with 429 by the rate limiter, by the key plan.',
    labelNames: ['plan'] as const,
    registers,
  });

  new Counter({
    name: 'kb_engine_requests_total',
    help: 'Requests this process sent to each engine (OpenSearch, Kafka, MinIO, ClickHouse, schema registry), by operation, counted by the adapters.',
    labelNames: ['engine', 'operation'] as const,
    registers,
    collect() {
      this.reset();
      for (const { engine, operation, count } of engineRequestCounts()) this.inc({ engine, operation }, count);
    },
  });
  const webhookDeliveries = new Counter({
    name: 'kb_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retrying (failed, another attempt is scheduled) or failed (given up).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookLag = new Histogram({
    name: 'kb_webhook_delivery_lag_seconds',
    help: 'Time from an event (its state committed) to its successful webhook delivery.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86400],
    registers,
  });

  const probe = options.probe;
  if (probe) {
    const probeUp = new Gauge({
      name: 'kb_metrics_probe_up',
      help: 'Whether the last scrape could read a deployment gauge (0: its engine did not answer).',
      labelNames: ['gauge'] as const,
      registers,
    });
    /** Runs `read`, then records in `kb_metrics_probe_up` whether it could read `gauge`. */
    const probed = async (gauge: string, read: () => Promise<void>) => {
      try {
        await read();
        probeUp.set({ gauge }, 1);
      } catch {
        probeUp.set({ gauge }, 0);
      }
    };
    new Gauge({
      name: 'kb_consumer_lag',
      help: "Messages a stage's consumer group has not committed yet, per partition of its input topic.",
      labelNames: ['stage', 'topic', 'partition'] as const,
      registers,
      async collect() {
        this.reset();
        await probed('kb_consumer_lag', async () => {
          for (const row of await probe.stageLag()) {
            this.set({ stage: row.stage, topic: row.topic, partition: String(row.partition) }, row.lag);
          }
        });
      },
    });
    new Gauge({
      name: 'kb_documents',
      help: "Documents not deleted, by their latest version's status (every workspace).",
      labelNames: ['status'] as const,
      registers,
      async collect() {
        this.reset();
        await probed('kb_documents', async () => {
          for (const [status, count] of Object.entries(await probe.documentsByStatus())) this.set({ status }, count);
        });
      },
    });
    const deadLetters = probe.deadLetters?.bind(probe);
    if (deadLetters) {
      new Gauge({
        name: 'kb_dead_letters',
        help: "Dead letters retained in each stage's dead-letter topic (every workspace), by state: pending (not replayed yet) or replayed. Read from the topics at most every 15 s.",
        labelNames: ['stage', 'state'] as const,
        registers,
        async collect() {
          this.reset();
          await probed('kb_dead_letters', async () => {
            for (const { stage, total, pending } of await deadLetters()) {
              this.set({ stage, state: 'pending' }, pending);
              this.set({ stage, state: 'replayed' }, total - pending);
            }
          });
        },
      });
    }
    const backlog = probe.backlog?.bind(probe);
    if (backlog) {
      let backlogRead: ReturnType<typeof backlog> | null = null;
      /** The gauges of one scrape share one read. */
      const readBacklog = () => {
        backlogRead ??= backlog().finally(() => {
          setTimeout(() => {
            backlogRead = null;
          }, 0);
        });
        return backlogRead;
      };
      new Gauge({
        name: 'kb_ingestion_backlog',
        help: 'Versions accepted and not yet completed or failed (pending or processing), per workspace with any; writes that queue ingestion are refused with 429 at KB_MAX_BACKLOG_PER_WORKSPACE.',
        labelNames: ['workspace'] as const,
        registers,
        async collect() {
          this.reset();
          await probed('kb_ingestion_backlog', async () => {
            for (const [workspace, count] of Object.entries((await readBacklog()).workspaces)) {
              this.set({ workspace }, count);
            }
          });
        },
      });
      new Gauge({
        name: 'kb_ingestion_backlog_overall',
        help: 'Versions accepted and not yet completed or failed, every workspace together; writes that queue ingestion are refused with 503 at KB_MAX_BACKLOG.',
        registers,
        async collect() {
          await probed('kb_ingestion_backlog_overall', async () => {
            this.set((await readBacklog()).total);
          });
        },
      });
      new Gauge({
        name: 'kb_ingestion_drain_rate',
        help: 'Versions completed per second over the last 15 s, every workspace: what Retry-After of a refused write is derived from.',
        registers,
        async collect() {
          await probed('kb_ingestion_drain_rate', async () => {
            this.set((await readBacklog()).drainPerSecond);
          });
        },
      });
      new Gauge({
        name: 'kb_ingestion_backlog_limit',
        help: 'The backlog bounds: scope workspace (KB_MAX_BACKLOG_PER_WORKSPACE) and deployment (KB_MAX_BACKLOG); 0 means no bound.',
        labelNames: ['scope'] as const,
        registers,
        async collect() {
          await probed('kb_ingestion_backlog_limit', async () => {
            const { limits } = await readBacklog();
            this.set({ scope: 'workspace' }, limits.maxPerWorkspace);
            this.set({ scope: 'deployment' }, limits.maxTotal);
          });
        },
      });
    }
    const webhooksPending = probe.webhooksPending?.bind(probe);
    if (webhooksPending) {
      let pendingRead: Promise<{ count: number; oldestCreatedAtMs: number | null }> | null = null;
      /** Both gauges of one scrape share one read. */
      const readPending = () => {
        pendingRead ??= webhooksPending().finally(() => {
          setTimeout(() => {
            pendingRead = null;
          }, 0);
        });
        return pendingRead;
      };
      new Gauge({
        name: 'kb_webhook_pending_deliveries',
        help: 'Webhook deliveries not yet delivered or given up (every workspace).',
        registers,
        async collect() {
          await probed('kb_webhook_pending_deliveries', async () => {
            this.set((await readPending()).count);
          });
        },
      });
      new Gauge({
        name: 'kb_webhook_oldest_pending_seconds',
        help: 'Age of the oldest pending webhook delivery (0 when none is pending).',
        registers,
        async collect() {
          await probed('kb_webhook_oldest_pending_seconds', async () => {
            const { oldestCreatedAtMs } = await readPending();
            this.set(oldestCreatedAtMs === null ? 0 : Math.max(0, (Date.now() - oldestCreatedAtMs) / 1000));
          });
        },
      });
    }
  }

  return {
    httpRequest(route, method, status, seconds) {
      const labels = { route, method, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    stageAttempt(stage, attempt, outcome, seconds) {
      if (attempt > 1) retried.inc({ stage });
      (outcome === 'processed' ? processed : failed).inc({ stage });
      handlerDuration.observe({ stage, outcome }, seconds);
    },
    stageDeadLettered(stage) {
      deadLettered.inc({ stage });
    },
    embeddingBatch(texts) {
      embeddedChunks.inc(texts);
      embeddingBatches.observe(texts);
    },
    rateLimited(plan) {
      rateLimited.inc({ plan });
    },
    webhookDelivery(outcome, lagSeconds) {
      webhookDeliveries.inc({ outcome });
      if (lagSeconds !== null) webhookLag.observe(lagSeconds);
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
