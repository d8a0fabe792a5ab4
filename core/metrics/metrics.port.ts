import type { StageName } from '../events/events.ts';
import type { VersionStatus } from '../model/document-records.model.ts';

/** One stage's consumer-group lag on one partition of its input topic. */
export interface StageLag {
  readonly stage: StageName;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/** Gauges that describe the whole deployment, read from the ports when scraped. */
export interface DeploymentProbe {
  stageLag(): Promise<StageLag[]>;
  documentsByStatus(): Promise<Record<VersionStatus, number>>;
  /** Pending webhook deliveries: how many, and when the oldest was enqueued (absent: not exported). */
  webhooksPending?(): Promise<{ count: number; oldestCreatedAtMs: number | null }>;
  /** Dead letters retained per stage, and those not replayed yet (absent: not exported). */
  deadLetters?(): Promise<readonly { stage: StageName; total: number; pending: number }[]>;
  /** The ingestion backlog per workspace and in all, its drain rate and its bounds (absent: not exported). */
  backlog?(): Promise<IngestionBacklogGauges>;
}

/** What `/metrics` shows of the ingestion backlog (see `core/services/ingestion-backlog.service.ts`). */
export interface IngestionBacklogGauges {
  /** Versions `pending` or `processing` per workspace (workspaces with none are absent). */
  readonly workspaces: Readonly<Record<string, number>>;
  readonly total: number;
  /** Versions completed per second over the recent window, every workspace. */
  readonly drainPerSecond: number;
  /** 0: no bound. */
  readonly limits: { readonly maxPerWorkspace: number; readonly maxTotal: number };
}

/**
 * What the service reports about itself (an observer the composition root hands to the stage
 * runner's decorators and to the HTTP layer). Every method is cheap and never throws.
 */
export interface Metrics {
  /** One handled HTTP request; `route` is the route pattern (`/api/v1/documents/:id`), not the path. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** One attempt of a stage handler: `processed` when it resolved, `failed` when it threw. */
  stageAttempt(stage: StageName, attempt: number, outcome: 'processed' | 'failed', seconds: number): void;
  /** An event a stage gave up on and sent to its dead-letter topic. */
  stageDeadLettered(stage: StageName): void;
  /** One call to the embedding provider with this many texts. */
  embeddingBatch(texts: number): void;
  /** A request refused by the rate limiter. */
  rateLimited(plan: string): void;
  /** One webhook delivery attempt by outcome; `lagSeconds` from the event to its delivery when delivered. */
  webhookDelivery(outcome: 'delivered' | 'retrying' | 'failed', lagSeconds: number | null): void;
  /** The Prometheus text exposition of everything, deployment gauges read now. */
  render(): Promise<{ contentType: string; body: string }>;
}
