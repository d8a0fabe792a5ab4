import { STAGE_NAMES, type StageName, type Topics } from '../events/events.ts';
import type { VersionStatus } from '../model/document-records.model.ts';
import { VERSION_STATUSES } from '../model/document-records.model.ts';
import type { DocumentView, ReadinessView } from '../model/response-views.model.ts';
import type { MessageLogAdmin } from '../ports/message-log/message-log.port.ts';
import type { DeadLetterCountView, DeadLettersService } from './dead-letters.service.ts';
import type { DocumentsService } from './documents.service.ts';
import type { HealthService } from './health.service.ts';
import type { IngestionBacklogService } from './ingestion-backlog.service.ts';
import type { RequestContext } from './request-context.ts';

export interface StageBacklogView {
  stage: StageName;
  topic: string;
  /** Messages the stage's consumer group has not committed yet (waiting or being worked on); null when unknown. */
  uncommitted: number | null;
}

export interface PipelineOverviewView {
  stages: StageBacklogView[];
  /** The workspace's documents by the status of their latest version. */
  documents: Record<VersionStatus, number>;
  /** The workspace's most recent failed documents, with their errors. */
  failed: Pick<DocumentView, 'document_id' | 'name' | 'version' | 'error' | 'updated_at'>[];
  readiness: ReadinessView;
  /** This workspace's dead letters per stage (read at most 15 s ago); null when they could not be read. */
  dead_letters: DeadLetterCountView[] | null;
  /** The ingestion backlog and how fast it drains; null when it could not be counted. */
  backlog: BacklogOverviewView | null;
}

/** Versions accepted and not yet completed or failed, and the bounds at which uploads are refused. */
export interface BacklogOverviewView {
  /** This workspace's. */
  workspace: number;
  /** Every workspace's together. */
  total: number;
  /** `KB_MAX_BACKLOG_PER_WORKSPACE` (0: no bound). */
  max_per_workspace: number;
  /** `KB_MAX_BACKLOG` (0: no bound). */
  max_total: number;
  /** Versions of this workspace completed per second lately. */
  workspace_drain_per_second: number;
  /** Versions of every workspace completed per second lately. */
  drain_per_second: number;
}

export interface PipelineOverviewService {
  overview(ctx: RequestContext): Promise<PipelineOverviewView>;
}

const FAILED_SHOWN = 20;

/** What the dashboard's Pipeline page shows: stage backlogs (all workspaces), this workspace's documents by status, readiness. */
export function createPipelineOverviewService(deps: {
  logAdmin: MessageLogAdmin;
  topics: Topics;
  documents: DocumentsService;
  health: HealthService;
  deadLetters: Pick<DeadLettersService, 'counts'>;
  backlog: Pick<IngestionBacklogService, 'view'>;
}): PipelineOverviewService {
  const inputTopic: Record<StageName, string> = {
    parse: deps.topics.uploaded,
    chunk: deps.topics.parsed,
    embed: deps.topics.chunked,
    index: deps.topics.embedded,
  };
  const count = async (ctx: RequestContext, status: VersionStatus) => {
    const result = await deps.documents.list(ctx, { status, page: 1, pageSize: 1 });
    return result.mode === 'offset' ? result.total : result.documents.length;
  };

  return {
    async overview(ctx) {
      const [stages, counts, failedPage, readiness, deadLetters, backlog] = await Promise.all([
        Promise.all(
          STAGE_NAMES.map(async (stage) => ({
            stage,
            topic: inputTopic[stage],
            uncommitted: await deps.logAdmin.lag(deps.topics.group(stage), inputTopic[stage]).catch(() => null),
          })),
        ),
        Promise.all(VERSION_STATUSES.map(async (status) => [status, await count(ctx, status)] as const)),
        deps.documents.list(ctx, { status: 'failed', page: 1, pageSize: FAILED_SHOWN }),
        deps.health.ready(),
        deps.deadLetters.counts({ workspaceId: ctx.workspaceId }).catch(() => null),
        deps.backlog.view().then(
          (view): BacklogOverviewView => ({
            workspace: view.workspaces[ctx.workspaceId] ?? 0,
            total: view.total,
            max_per_workspace: view.limits.maxPerWorkspace,
            max_total: view.limits.maxTotal,
            workspace_drain_per_second: view.workspaceDrainPerSecond[ctx.workspaceId] ?? 0,
            drain_per_second: view.drainPerSecond,
          }),
          () => null,
        ),
      ]);
      const failed = await Promise.all(
        failedPage.documents.map(async (item) => {
          const doc = await deps.documents.get(ctx, item.document_id);
          return {
            document_id: doc.document_id,
            name: doc.name,
            version: doc.version,
            error: doc.error,
            updated_at: doc.updated_at,
          };
        }),
      );
      return {
        stages,
        documents: Object.fromEntries(counts) as Record<VersionStatus, number>,
        failed,
        readiness,
        dead_letters: deadLetters,
        backlog,
      };
    },
  };
}
