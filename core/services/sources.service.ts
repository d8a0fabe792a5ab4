import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import type { RunView, SourceView, SyncStartedView } from '../model/source-views.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { RunRecord, SourceKind, SourceRecord, SourceStore } from '../ports/source-store/source-store.port.ts';
import { globPatternProblems } from '../sources/glob-pattern.ts';
import { scheduleMs } from '../sources/schedule.ts';
import type { LocationChecker, LocationInput } from '../sources/source-locations.ts';
import { checkDisplayText } from '../util/display-text.ts';
import { isoNow } from '../util/time.ts';
import type { DocumentWritesService } from './document-writes.service.ts';
import type { RequestContext } from './request-context.ts';
import type { SourceSyncService } from './source-sync.service.ts';

export interface NewSourceInput extends LocationInput {
  readonly name: string;
  readonly kind: SourceKind;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly metadata?: Record<string, unknown>;
  readonly schedule?: string | null;
}

/** What a PATCH may change: not the name (the `source` of its documents) nor the kind. */
export interface SourcePatchInput extends LocationInput {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly metadata?: Record<string, unknown>;
  readonly schedule?: string | null;
}

export interface SourcesService {
  create(ctx: RequestContext, input: NewSourceInput): Promise<SourceView>;
  list(ctx: RequestContext): Promise<{ sources: SourceView[] }>;
  get(ctx: RequestContext, id: string): Promise<SourceView>;
  update(ctx: RequestContext, id: string, patch: SourcePatchInput): Promise<SourceView>;
  /** Removes the source (409 while it syncs); with `deleteDocuments`, deletes (not purges) its documents too. */
  remove(ctx: RequestContext, id: string, options: { readonly deleteDocuments: boolean }): Promise<void>;
  sync(ctx: RequestContext, id: string, options: { readonly allowMassDelete: boolean }): Promise<SyncStartedView>;
  runs(ctx: RequestContext, id: string, limit: number): Promise<{ runs: RunView[] }>;
  run(ctx: RequestContext, id: string, runId: string): Promise<RunView>;
  /** The `source_item` of each of these documents that a source synchronises. */
  itemKeysOf(documentIds: readonly string[]): Promise<Map<string, string>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notFound = (id: string) => new KbError('not-found', `Source ${id} was not found.`);
const invalid = (field: string, message: string) =>
  new KbError('validation-error', `${field} ${message}.`, { errors: [{ field, message }] });

export function runView(run: RunRecord): RunView {
  return {
    run_id: run.id,
    source_id: run.sourceId,
    status: run.status,
    allow_mass_delete: run.allowMassDelete,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    counts: {
      seen: run.counts.seen,
      created: run.counts.created,
      updated: run.counts.updated,
      unchanged: run.counts.unchanged,
      deleted: run.counts.deleted,
      failed: run.counts.failed,
      deletions_held: run.counts.deletionsHeld,
    },
    errors: run.errors.map((e) => ({ item: e.item, code: e.code, detail: e.detail })),
  };
}

function sourceView(source: SourceRecord, last: RunRecord | null): SourceView {
  const { path, urls, sitemap, endpoint, bucket, prefix, region, secret } = source.location;
  return {
    id: source.id,
    name: source.name,
    kind: source.kind,
    ...(path !== undefined ? { path } : {}),
    ...(urls !== undefined ? { urls: [...urls] } : {}),
    ...(sitemap !== undefined ? { sitemap } : {}),
    ...(source.kind === 's3'
      ? {
          endpoint: endpoint ?? '',
          bucket: bucket ?? '',
          prefix: prefix ?? '',
          region: region ?? null,
          credentials: secret ? ('stored' as const) : ('none' as const),
        }
      : {}),
    include: [...source.include],
    exclude: [...source.exclude],
    metadata: source.metadata,
    schedule: source.schedule,
    created_at: source.createdAt,
    updated_at: source.updatedAt,
    status: last ? last.status : 'never_synced',
    last_run: last ? runView(last) : null,
  };
}

function checkSchedule(schedule: string | null | undefined): void {
  if (schedule === undefined || schedule === null) return;
  if (scheduleMs(schedule) === null) {
    throw invalid(
      'schedule',
      'must be an ISO 8601 duration of weeks, days, hours, minutes or seconds, at least one second (e.g. PT15M), or null',
    );
  }
}

/** Patterns that cannot be matched quickly, or are not supported: 422 naming each. */
function checkPatterns(include: readonly string[], exclude: readonly string[]): void {
  const errors = globPatternProblems({ include, exclude });
  if (errors.length > 0) {
    throw new KbError('validation-error', errors.map((e) => `${e.field} ${e.message}`).join('; '), { errors });
  }
}

/**
 * Sources of a workspace: create (the location checked and canonicalised), read, change, remove,
 * and start a sync. Another workspace's source, or a malformed id, is `not-found`.
 */
export function createSourcesService(deps: {
  readonly store: SourceStore;
  readonly documents: DocumentStore;
  readonly documentWrites: DocumentWritesService;
  readonly sync: SourceSyncService;
  readonly checkLocation: LocationChecker;
}): SourcesService {
  const { store } = deps;

  async function load(ctx: RequestContext, id: string): Promise<SourceRecord> {
    if (!UUID.test(id)) throw notFound(id);
    const source = await store.getSource(ctx.workspaceId, id);
    if (!source) throw notFound(id);
    return source;
  }

  async function view(source: SourceRecord): Promise<SourceView> {
    const [last] = await store.listRuns(source.id, 1);
    return sourceView(source, last ?? null);
  }

  async function assertIdle(source: SourceRecord): Promise<void> {
    const [last] = await store.listRuns(source.id, 1);
    if (last?.status === 'running') {
      throw new KbError('sync-running', `Run ${last.id} of source ${source.name} is running; wait for it to end.`);
    }
  }

  return {
    async create(ctx, input) {
      const name = input.name.trim();
      if (name.length === 0) throw invalid('name', 'must not be blank');
      checkDisplayText('name', name);
      checkSchedule(input.schedule);
      checkPatterns(input.include ?? [], input.exclude ?? []);
      const location = await deps.checkLocation(ctx.workspaceId, input.kind, input);
      const taken = await deps.documents.listDocuments({ workspaceId: ctx.workspaceId, source: name, limit: 1 });
      if (taken.documents.length > 0) {
        throw new KbError(
          'conflict',
          `Documents uploaded with source "${name}" exist in this workspace; choose another name for the source.`,
        );
      }
      const now = isoNow();
      const source = await store.createSource({
        id: uuidv7(),
        workspaceId: ctx.workspaceId,
        name,
        kind: input.kind,
        location,
        include: [...(input.include ?? [])],
        exclude: [...(input.exclude ?? [])],
        metadata: input.metadata ?? {},
        schedule: input.schedule ?? null,
        createdAt: now,
        updatedAt: now,
      });
      return sourceView(source, null);
    },

    async list(ctx) {
      return { sources: await Promise.all((await store.listSources(ctx.workspaceId)).map(view)) };
    },

    async get(ctx, id) {
      return view(await load(ctx, id));
    },

    async update(ctx, id, patch) {
      const source = await load(ctx, id);
      checkSchedule(patch.schedule);
      if (patch.include !== undefined || patch.exclude !== undefined) {
        checkPatterns(patch.include ?? source.include, patch.exclude ?? source.exclude);
      }
      const moves = (
        ['path', 'urls', 'sitemap', 'endpoint', 'bucket', 'prefix', 'region', 'access_key', 'secret_key'] as const
      ).some((member) => patch[member] !== undefined);
      const location = moves
        ? await deps.checkLocation(ctx.workspaceId, source.kind, patch, source.location)
        : undefined;
      const updated = await store.updateSource(ctx.workspaceId, source.id, {
        ...(location ? { location } : {}),
        ...(patch.include !== undefined ? { include: [...patch.include] } : {}),
        ...(patch.exclude !== undefined ? { exclude: [...patch.exclude] } : {}),
        ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
        ...(patch.schedule !== undefined ? { schedule: patch.schedule } : {}),
        updatedAt: isoNow(),
      });
      if (!updated) throw notFound(id);
      return view(updated);
    },

    async remove(ctx, id, { deleteDocuments }) {
      const source = await load(ctx, id);
      await assertIdle(source);
      if (deleteDocuments) {
        for (const item of await store.listItems(source.id)) {
          try {
            await deps.documentWrites.remove(ctx, item.documentId, { purge: false });
          } catch (error) {
            if (!(error instanceof KbError && error.code === 'not-found')) throw error;
          }
          await store.deleteItem(source.id, item.itemKey);
        }
      }
      if (!(await store.deleteSource(ctx.workspaceId, source.id))) throw notFound(id);
    },

    async sync(ctx, id, { allowMassDelete }) {
      const run = await deps.sync.start(await load(ctx, id), { allowMassDelete });
      return { run_id: run.id, status: 'running' };
    },

    async runs(ctx, id, limit) {
      const source = await load(ctx, id);
      return { runs: (await store.listRuns(source.id, limit)).map(runView) };
    },

    async run(ctx, id, runId) {
      const source = await load(ctx, id);
      const run = UUID.test(runId) ? await store.getRun(source.id, runId) : null;
      if (!run) throw new KbError('not-found', `Run ${runId} of source ${id} was not found.`);
      return runView(run);
    },

    itemKeysOf: (documentIds) => store.itemKeysOf(documentIds),
  };
}
