import { KbError } from '../../errors/kb-error.ts';
import { type Database, migrate, openDatabase } from '../sqlite/open-database.ts';
import type {
  ItemRecord,
  RunCounts,
  RunError,
  RunRecord,
  SourceKind,
  SourceLocation,
  SourceRecord,
  SourceStore,
} from './source-store.port.ts';

export interface SqliteSourceStoreOptions {
  /** SQLite database file; its directory is created if missing. `:memory:` for a private in-memory store. */
  readonly file: string;
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ss_sources (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    location_json TEXT NOT NULL,
    include_json TEXT NOT NULL,
    exclude_json TEXT NOT NULL,
    metadata_json TEXT NOT NULL,
    schedule TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (workspace_id, name)
  )`,
  `CREATE TABLE IF NOT EXISTS ss_runs (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    status TEXT NOT NULL,
    allow_mass_delete INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    heartbeat_at TEXT NOT NULL,
    counts_json TEXT NOT NULL,
    errors_json TEXT NOT NULL
  )`,
  'CREATE INDEX IF NOT EXISTS ss_runs_source ON ss_runs (source_id, id)',
  'CREATE INDEX IF NOT EXISTS ss_runs_status ON ss_runs (status)',
  `CREATE TABLE IF NOT EXISTS ss_items (
    source_id TEXT NOT NULL,
    item_key TEXT NOT NULL,
    document_id TEXT NOT NULL,
    size_bytes INTEGER,
    mtime_ms INTEGER,
    etag TEXT,
    last_modified TEXT,
    sha256 TEXT,
    PRIMARY KEY (source_id, item_key)
  )`,
  'CREATE INDEX IF NOT EXISTS ss_items_document ON ss_items (document_id)',
];

interface SourceRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: string;
  location_json: string;
  include_json: string;
  exclude_json: string;
  metadata_json: string;
  schedule: string | null;
  created_at: string;
  updated_at: string;
}

interface RunRow {
  id: string;
  source_id: string;
  workspace_id: string;
  status: string;
  allow_mass_delete: number;
  started_at: string;
  finished_at: string | null;
  heartbeat_at: string;
  counts_json: string;
  errors_json: string;
}

interface ItemRow {
  source_id: string;
  item_key: string;
  document_id: string;
  size_bytes: number | null;
  mtime_ms: number | null;
  etag: string | null;
  last_modified: string | null;
  sha256: string | null;
}

const toSource = (r: SourceRow): SourceRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  kind: r.kind as SourceKind,
  location: JSON.parse(r.location_json) as SourceLocation,
  include: JSON.parse(r.include_json) as string[],
  exclude: JSON.parse(r.exclude_json) as string[],
  metadata: JSON.parse(r.metadata_json) as Record<string, unknown>,
  schedule: r.schedule,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const sourceRow = (s: SourceRecord): SourceRow => ({
  id: s.id,
  workspace_id: s.workspaceId,
  name: s.name,
  kind: s.kind,
  location_json: JSON.stringify(s.location),
  include_json: JSON.stringify(s.include),
  exclude_json: JSON.stringify(s.exclude),
  metadata_json: JSON.stringify(s.metadata),
  schedule: s.schedule,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

const toRun = (r: RunRow): RunRecord => ({
  id: r.id,
  sourceId: r.source_id,
  workspaceId: r.workspace_id,
  status: r.status as RunRecord['status'],
  allowMassDelete: r.allow_mass_delete === 1,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  heartbeatAt: r.heartbeat_at,
  counts: JSON.parse(r.counts_json) as RunCounts,
  errors: JSON.parse(r.errors_json) as RunError[],
});

const toItem = (r: ItemRow): ItemRecord => ({
  sourceId: r.source_id,
  itemKey: r.item_key,
  documentId: r.document_id,
  sizeBytes: r.size_bytes,
  mtimeMs: r.mtime_ms,
  etag: r.etag,
  lastModified: r.last_modified,
  sha256: r.sha256,
});

function isConstraintError(error: unknown): boolean {
  const code = error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}

const nameTaken = (name: string) =>
  new KbError('conflict', `A source named "${name}" already exists in this workspace.`);

/**
 * The source store in SQLite. The one-run-per-source claim is a write transaction (`BEGIN
 * IMMEDIATE`), so it holds across processes sharing the file. Locations, patterns, metadata,
 * counts and errors are JSON text; instants are the ISO strings given, compared as strings (the
 * service writes them all in the same UTC `toISOString` form).
 */
export function createSqliteSourceStore(options: SqliteSourceStoreOptions): SourceStore {
  const db: Database = openDatabase(options.file);
  migrate(db, 'source-store-001', MIGRATIONS);

  const insertSource = db.prepare(
    `INSERT INTO ss_sources (id, workspace_id, name, kind, location_json, include_json, exclude_json, metadata_json, schedule, created_at, updated_at)
     VALUES (@id, @workspace_id, @name, @kind, @location_json, @include_json, @exclude_json, @metadata_json, @schedule, @created_at, @updated_at)`,
  );
  const sourceById = db.prepare<[string, string], SourceRow>(
    'SELECT * FROM ss_sources WHERE workspace_id = ? AND id = ?',
  );
  const sourcesOf = db.prepare<[string], SourceRow>('SELECT * FROM ss_sources WHERE workspace_id = ? ORDER BY name');
  const allSources = db.prepare<[], SourceRow>('SELECT * FROM ss_sources ORDER BY workspace_id, name');
  const replaceSource = db.prepare(
    `UPDATE ss_sources SET name = @name, location_json = @location_json, include_json = @include_json,
       exclude_json = @exclude_json, metadata_json = @metadata_json, schedule = @schedule, updated_at = @updated_at
     WHERE id = @id`,
  );
  const removeSource = db.prepare<[string, string]>('DELETE FROM ss_sources WHERE workspace_id = ? AND id = ?');
  const removeRuns = db.prepare<[string]>('DELETE FROM ss_runs WHERE source_id = ?');
  const removeItems = db.prepare<[string]>('DELETE FROM ss_items WHERE source_id = ?');

  const runningOf = db.prepare<[string], RunRow>("SELECT * FROM ss_runs WHERE source_id = ? AND status = 'running'");
  const insertRun = db.prepare(
    `INSERT INTO ss_runs (id, source_id, workspace_id, status, allow_mass_delete, started_at, finished_at, heartbeat_at, counts_json, errors_json)
     VALUES (@id, @source_id, @workspace_id, @status, @allow_mass_delete, @started_at, @finished_at, @heartbeat_at, @counts_json, @errors_json)`,
  );
  const progressRun = db.prepare<[string, string, string, string]>(
    "UPDATE ss_runs SET counts_json = ?, errors_json = ?, heartbeat_at = ? WHERE id = ? AND status = 'running'",
  );
  const endRun = db.prepare<[string, string, string, string, string]>(
    "UPDATE ss_runs SET status = ?, counts_json = ?, errors_json = ?, finished_at = ? WHERE id = ? AND status = 'running'",
  );
  const runById = db.prepare<[string, string], RunRow>('SELECT * FROM ss_runs WHERE source_id = ? AND id = ?');
  const runsOf = db.prepare<[string, number], RunRow>(
    'SELECT * FROM ss_runs WHERE source_id = ? ORDER BY id DESC LIMIT ?',
  );
  const allRunning = db.prepare<[], RunRow>("SELECT * FROM ss_runs WHERE status = 'running' ORDER BY id");

  const itemsOf = db.prepare<[string], ItemRow>('SELECT * FROM ss_items WHERE source_id = ? ORDER BY item_key');
  const upsertItem = db.prepare(
    `INSERT INTO ss_items (source_id, item_key, document_id, size_bytes, mtime_ms, etag, last_modified, sha256)
     VALUES (@source_id, @item_key, @document_id, @size_bytes, @mtime_ms, @etag, @last_modified, @sha256)
     ON CONFLICT (source_id, item_key) DO UPDATE SET document_id = excluded.document_id, size_bytes = excluded.size_bytes,
       mtime_ms = excluded.mtime_ms, etag = excluded.etag, last_modified = excluded.last_modified, sha256 = excluded.sha256`,
  );
  const removeItem = db.prepare<[string, string]>('DELETE FROM ss_items WHERE source_id = ? AND item_key = ?');
  const itemOfDocument = db.prepare<[string], { item_key: string }>(
    'SELECT item_key FROM ss_items WHERE document_id = ? LIMIT 1',
  );

  const claim = db.transaction((run: RunRecord, staleBefore: string) => {
    const running = runningOf.get(run.sourceId);
    if (running) {
      if (running.heartbeat_at >= staleBefore) return { running: toRun(running) };
      const errors = [
        ...(JSON.parse(running.errors_json) as RunError[]),
        { item: null, code: 'sync-interrupted', detail: 'The process running this sync stopped before it finished.' },
      ];
      endRun.run('failed', running.counts_json, JSON.stringify(errors), run.startedAt, running.id);
    }
    insertRun.run({
      id: run.id,
      source_id: run.sourceId,
      workspace_id: run.workspaceId,
      status: 'running',
      allow_mass_delete: run.allowMassDelete ? 1 : 0,
      started_at: run.startedAt,
      finished_at: null,
      heartbeat_at: run.heartbeatAt,
      counts_json: JSON.stringify(run.counts),
      errors_json: JSON.stringify(run.errors),
    });
    return { started: { ...run, status: 'running' as const, finishedAt: null } };
  });

  const update = db.transaction(
    (workspaceId: string, id: string, patch: Parameters<SourceStore['updateSource']>[2]) => {
      const row = sourceById.get(workspaceId, id);
      if (!row) return null;
      const next: SourceRecord = { ...toSource(row), ...patch };
      replaceSource.run(sourceRow(next));
      return next;
    },
  );

  const remove = db.transaction((workspaceId: string, id: string) => {
    const removed = removeSource.run(workspaceId, id).changes > 0;
    if (removed) {
      removeRuns.run(id);
      removeItems.run(id);
    }
    return removed;
  });

  return {
    kind: 'sqlite',

    async createSource(source) {
      try {
        insertSource.run(sourceRow(source));
      } catch (error) {
        if (isConstraintError(error)) throw nameTaken(source.name);
        throw error;
      }
      return source;
    },
    async getSource(workspaceId, id) {
      const row = sourceById.get(workspaceId, id);
      return row ? toSource(row) : null;
    },
    async listSources(workspaceId) {
      return (workspaceId === null ? allSources.all() : sourcesOf.all(workspaceId)).map(toSource);
    },
    async updateSource(workspaceId, id, patch) {
      try {
        return update.immediate(workspaceId, id, patch);
      } catch (error) {
        if (isConstraintError(error)) throw nameTaken(patch.name ?? '');
        throw error;
      }
    },
    async deleteSource(workspaceId, id) {
      return remove.immediate(workspaceId, id);
    },

    async claimRun(run, staleBefore) {
      return claim.immediate(run, staleBefore);
    },
    async updateRun(runId, { counts, errors, heartbeatAt }) {
      return progressRun.run(JSON.stringify(counts), JSON.stringify(errors), heartbeatAt, runId).changes > 0;
    },
    async finishRun(runId, { status, counts, errors, finishedAt }) {
      return (
        endRun.run(
          status,
          JSON.stringify(counts),
          JSON.stringify(errors),
          finishedAt ?? new Date().toISOString(),
          runId,
        ).changes > 0
      );
    },
    async getRun(sourceId, runId) {
      const row = runById.get(sourceId, runId);
      return row ? toRun(row) : null;
    },
    async listRuns(sourceId, limit) {
      return runsOf.all(sourceId, limit).map(toRun);
    },
    async listRunningRuns() {
      return allRunning.all().map(toRun);
    },

    async listItems(sourceId) {
      return itemsOf.all(sourceId).map(toItem);
    },
    async putItem(item) {
      upsertItem.run({
        source_id: item.sourceId,
        item_key: item.itemKey,
        document_id: item.documentId,
        size_bytes: item.sizeBytes,
        mtime_ms: item.mtimeMs,
        etag: item.etag,
        last_modified: item.lastModified,
        sha256: item.sha256,
      });
    },
    async deleteItem(sourceId, itemKey) {
      removeItem.run(sourceId, itemKey);
    },
    async itemKeysOf(documentIds) {
      const out = new Map<string, string>();
      for (const id of documentIds) {
        const row = itemOfDocument.get(id);
        if (row) out.set(id, row.item_key);
      }
      return out;
    },

    async close() {
      db.close();
    },
  };
}
