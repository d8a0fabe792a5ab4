import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { Database } from '../../sqlite/open-database.ts';

/**
 * Text analysis of the index: FTS5's `porter unicode61 remove_diacritics 2` as near as Lance's
 * tokenizer gets — words split at anything but letters and digits, lower-cased, diacritics folded,
 * English (Snowball) stems, no stop words removed (FTS5 removes none: a query of common words
 * still matches).
 */
export const KEYWORD_ANALYSIS = {
  withPosition: false,
  baseTokenizer: 'simple',
  language: 'English',
  stem: true,
  removeStopWords: false,
  lowercase: true,
  asciiFolding: true,
  maxTokenLength: 256,
} as const;
/**
 * Bumped when {@link KEYWORD_ANALYSIS}, the table's columns or its indexes change: a saved index of
 * another one is rebuilt (2: a btree index on `document_id` for filtered queries' pre-filter).
 */
const FORMAT = 2;
/** Rows read from SQLite and written to the index per step of a rebuild or catch-up. */
const BATCH = 20_000;
/**
 * Rows added since the last optimisation after which new rows are merged into the index even in the
 * middle of a catch-up. Fewer are merged as soon as the index is caught up (see {@link mergeDue}):
 * LanceDB searches rows not yet merged without the index, at about 0.2 ms per row and query.
 */
const OPTIMIZE_EVERY = 20_000;
/**
 * What one write to the table counts towards {@link OPTIMIZE_EVERY} besides its rows: each leaves a
 * fragment (and deletion files) that every query visits until the next optimisation, so 200 small
 * catch-ups are merged as 20,000 new rows are.
 */
const WRITE_WEIGHT = 100;
/** Changes applied since the state was last saved after which it is saved again (besides at close). */
const SAVE_EVERY = 20_000;
/** Changes waiting beyond which (and beyond the number of chunks) the index is rebuilt instead of caught up. */
const REBUILD_BACKLOG = 50_000;
/** How long superseded table versions are kept after an optimisation (queries in flight read them). */
const KEEP_VERSIONS_MS = 60_000;
/** How often a following index (see {@link KeywordIndexOptions.follow}) looks for changes. */
const FOLLOW_EVERY_MS = 1000;
/** After a failed rebuild or catch-up, how long queries use the exact path before it is tried again. */
const RETRY_AFTER_MS = 60_000;

export interface KeywordIndexOptions {
  /** Directory of the index (created when missing). */
  readonly dir: string;
  /**
   * A backlog of at most this many changes (or a rebuild of at most this many chunks) is applied
   * before the query that finds it; a larger one is applied in the background while queries take
   * the exact path.
   */
  readonly syncBelow: number;
  /**
   * Threads of LanceDB's compute pool (its `LANCE_CPU_THREADS`, read once per process when the pool
   * starts), raised to 2: LanceDB 0.31 sizes the pool at the cores less 2, at least 1, and with one
   * thread its full-text index build waits on itself forever (lance-format/lance#7350).
   */
  readonly threads: number;
  /**
   * Whether to open (load or build) the index at once and apply new changes in the background as
   * they come, rather than at the first keyword query (for the process that answers queries; a
   * one-shot command leaves it to that process).
   */
  readonly follow?: boolean;
  /** Told about rebuilds, background work and failures. */
  readonly log?: (message: string) => void;
}

export interface KeywordMatches {
  /** Chunk `seq`s, best first. */
  readonly seqs: number[];
  /** Their BM25 scores (higher is better). */
  readonly scores: number[];
  /** Whether the index may hold more matches than were returned. */
  readonly more: boolean;
}

/** A row of the index (a type alias, so LanceDB takes it as a plain record). */
type ChunkText = {
  seq: number;
  workspace_id: string;
  document_id: string;
  content: string;
};

interface SavedState {
  readonly format: number;
  readonly table: string;
  readonly version: number;
  readonly cursor: number;
}

interface State {
  readonly name: string;
  /** Null while no chunk has been written yet (an index cannot be built over nothing). */
  table: lancedb.Table | null;
  cursor: number;
  unsaved: number;
  unoptimized: number;
}

/** Directories whose index an open instance of this process owns. */
const owned = new Set<string>();

/**
 * A full-text index (LanceDB: BM25 with block-max WAND, so a top-k query does not score every
 * match) over the chunk text, keyed by chunk `seq`, that follows the `chunks` table through the
 * `keyword_changes` log the schema's triggers append to in the same transaction as each write.
 *
 * - Exactness under writes: before a query the changes logged since the index's cursor are
 *   applied (each changed seq is removed and, when its row still exists, added again), so inserts,
 *   updates, deletes, purges, rollbacks and reindex are seen by the next query. {@link search}
 *   answers null instead — the caller then takes the exact FTS5 path — whenever the index is not
 *   known to be current: while it is built, while a large backlog is applied in the background, or
 *   when another instance owns the directory.
 * - Persistence: the LanceDB table lives in {@link KeywordIndexOptions.dir}; `state.json` (written
 *   to a temporary name and renamed) names the table, its version and the log position it holds.
 *   Replaying a change is idempotent, so a state older than the table is harmless; the log is pruned
 *   only up to a saved position.
 * - Repair: at the first query, a saved index is used only when its format matches, the table is
 *   at least at the saved version, the log still holds every change after its cursor and, caught
 *   up, it holds as many rows as `chunks`. Otherwise (missing, stale, damaged) it is rebuilt from
 *   SQLite into a fresh table, and the old one is dropped.
 * - Outside it: served intervals and every filter but the workspace and document ids; the store
 *   checks those in SQL over the candidates and decides when to fall back to an exact FTS5 query.
 */
export function createKeywordIndex(db: Database, options: KeywordIndexOptions) {
  // The pool starts at LanceDB's first use in this process, so this must come before any.
  process.env.LANCE_CPU_THREADS = String(Math.max(2, Math.floor(options.threads)));
  const stateFile = path.join(options.dir, 'state.json');
  const statements = {
    lastChange: db.prepare<[], { id: number }>(
      "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'keyword_changes'), 0) AS id",
    ),
    firstChangeAfter: db.prepare<[number], { id: number | null }>(
      'SELECT min(id) AS id FROM keyword_changes WHERE id > ?',
    ),
    changesAfter: db.prepare<[number, number], { id: number; seq: number }>(
      'SELECT id, seq FROM keyword_changes WHERE id > ? ORDER BY id LIMIT ?',
    ),
    rowsOf: db.prepare<[string], ChunkText>(
      `SELECT seq, workspace_id, document_id, content FROM chunks
       WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ),
    page: db.prepare<[number, number], ChunkText>(
      'SELECT seq, workspace_id, document_id, content FROM chunks WHERE seq > ? ORDER BY seq LIMIT ?',
    ),
    count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM chunks'),
    prune: db.prepare('DELETE FROM keyword_changes WHERE id <= ?'),
  };
  const lastChange = () => statements.lastChange.get()?.id ?? 0;

  let connection: lancedb.Connection | null = null;
  let state: State | null = null;
  /** The first use's opening (load or rebuild), or null before it. */
  let opening: Promise<void> | null = null;
  let closed = false;
  /** Whether this instance owns the directory; null until it asks (again after a refusal, later). */
  let owner: boolean | null = null;
  let ownerAskedAt = 0;
  const ownsDirectory = (): boolean => {
    if (owner === true) return true;
    if (owner === false && Date.now() - ownerAskedAt < RETRY_AFTER_MS / 12) return false;
    ownerAskedAt = Date.now();
    owner = takeOwnership();
    return owner;
  };
  /** Another process owns the directory: the saved table version this one reads, once opened. */
  let reader: { name: string; version: number; table: lancedb.Table } | null = null;
  /** Background work (a rebuild, a catch-up, an optimisation), or null. */
  let job: Promise<void> | null = null;
  /** Whether that work is a catch-up short enough for a query to wait for. */
  let jobIsShort = false;
  /** When the next optimisation of a few new rows may start: the last one's duration after it ended. */
  let mergeAllowedAt = 0;
  /**
   * Whether the state's new rows should be merged into the index now: many of them, or any once the
   * index is caught up, at most a quarter of the time (an optimisation rewrites the whole full-text index).
   */
  const mergeDue = (current: State): boolean =>
    current.unoptimized >= OPTIMIZE_EVERY || (current.unoptimized > 0 && performance.now() >= mergeAllowedAt);
  let retryAt = 0;
  /** Serialises everything that writes the table or swaps the state. */
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(body: () => Promise<T>): Promise<T> => {
    const next = queue.then(body, body);
    queue = next.catch(() => undefined);
    return next;
  };

  function takeOwnership(): boolean {
    if (owned.has(options.dir)) return false;
    mkdirSync(options.dir, { recursive: true });
    const lock = path.join(options.dir, 'owner.pid');
    try {
      const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
      if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) return false;
    } catch {
      // No owner recorded.
    }
    writeFileSync(lock, String(process.pid));
    owned.add(options.dir);
    return true;
  }

  async function connect(): Promise<lancedb.Connection> {
    connection ??= await lancedb.connect(path.join(options.dir, 'lance'));
    return connection;
  }

  function readSaved(): SavedState | null {
    try {
      const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as SavedState;
      return saved.format === FORMAT && typeof saved.table === 'string' && Number.isInteger(saved.cursor)
        ? saved
        : null;
    } catch {
      return null;
    }
  }

  /** The saved index when it can be trusted once caught up; null means rebuild. */
  async function load(): Promise<State | null> {
    const saved = readSaved();
    if (saved === null) return null;
    if (saved.cursor > lastChange()) return null;
    const next = statements.firstChangeAfter.get(saved.cursor)?.id ?? null;
    if (next === null ? saved.cursor < lastChange() : next > saved.cursor + 1) return null;
    try {
      const table = await (await connect()).openTable(saved.table);
      if ((await table.version()) < saved.version) return null;
      // Rows a previous process added but did not merge into the index are merged soon.
      const unindexed = (await table.indexStats('content_idx'))?.numUnindexedRows ?? 0;
      return { name: saved.table, table, cursor: saved.cursor, unsaved: 0, unoptimized: unindexed };
    } catch {
      return null;
    }
  }

  async function writeStateOf(current: State): Promise<void> {
    const version = current.table === null ? 0 : await current.table.version();
    const saved: SavedState = { format: FORMAT, table: current.name, version, cursor: current.cursor };
    const tmp = `${stateFile}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify(saved));
    renameSync(tmp, stateFile);
    current.unsaved = 0;
    statements.prune.run(current.cursor);
  }

  async function createIndexes(table: lancedb.Table): Promise<void> {
    await table.createIndex('content', { config: lancedb.Index.fts(KEYWORD_ANALYSIS) });
    await table.createIndex('workspace_id', { config: lancedb.Index.bitmap() });
    // A filtered query hands its passing documents to the index (`document_id IN (…)`): the btree
    // finds their rows instead of a scan of the column.
    await table.createIndex('document_id', { config: lancedb.Index.btree() });
  }

  /** Adds rows to the state's table, creating it (with its indexes) with the first rows. */
  async function addRows(current: State, rows: ChunkText[]): Promise<void> {
    if (rows.length === 0) return;
    if (current.table === null) {
      const conn = await connect();
      current.table = await conn.createTable(current.name, rows, { mode: 'overwrite' });
      await createIndexes(current.table);
      current.unoptimized = 0;
      return;
    }
    await current.table.add(rows);
    current.unoptimized += rows.length + WRITE_WEIGHT;
  }

  /** Builds a fresh table from the `chunks` table and makes it the index. */
  async function rebuild(why: string): Promise<void> {
    const started = performance.now();
    const fresh: State = {
      name: `chunks_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`,
      table: null,
      cursor: lastChange(),
      unsaved: 1,
      unoptimized: 0,
    };
    // Rows read page by page (no long read transaction): a row that changes meanwhile is in the
    // log after the cursor taken first, and replaying it is idempotent.
    let after = 0;
    let rows = 0;
    for (;;) {
      const page = statements.page.all(after, BATCH);
      if (page.length === 0) break;
      if (fresh.table === null) {
        // The first page creates the table; the indexes come after the last, over everything.
        fresh.table = await (await connect()).createTable(fresh.name, page, { mode: 'overwrite' });
      } else {
        await fresh.table.add(page);
      }
      rows += page.length;
      after = (page[page.length - 1] as ChunkText).seq;
      if (closed) return;
    }
    if (fresh.table !== null) await createIndexes(fresh.table);
    const previous = state;
    state = fresh;
    await writeStateOf(fresh);
    if (previous !== null && previous.name !== fresh.name) await dropTable(previous.name);
    await dropOtherTables(fresh.name);
    if (rows > 0) {
      options.log?.(
        `keyword index: rebuilt from the database (${why}): ${rows} chunks in ${Math.round(performance.now() - started)} ms`,
      );
    }
  }

  async function dropTable(name: string): Promise<void> {
    try {
      await (await connect()).dropTable(name);
    } catch {
      // Already gone.
    }
  }

  async function dropOtherTables(keep: string): Promise<void> {
    const conn = await connect();
    for (const name of await conn.tableNames()) if (name !== keep) await dropTable(name);
  }

  /**
   * Applies up to `max` logged changes after the cursor; false when the log lost changes the index
   * has not seen (pruned by another process).
   */
  async function applyChanges(current: State, max: number): Promise<boolean> {
    const given = lastChange();
    const changes = statements.changesAfter.all(current.cursor, max);
    // Ids are consecutive and never reused: a hole after the cursor (or no change left up to the
    // last id given before reading) means changes this index has not seen were pruned.
    if (changes.length === 0) return current.cursor >= given;
    if ((changes[0] as { id: number }).id > current.cursor + 1) return false;
    const last = (changes[changes.length - 1] as { id: number }).id;
    const seqs = [...new Set(changes.map((change) => change.seq))];
    // The rows as they are now; read after the changes, so no change is missed.
    const rows = statements.rowsOf.all(JSON.stringify(seqs));
    if (current.table !== null) await current.table.delete(`seq IN (${seqs.join(', ')})`);
    await addRows(current, rows);
    current.cursor = last;
    current.unsaved += changes.length;
    if (current.unsaved >= SAVE_EVERY) await writeStateOf(current);
    return true;
  }

  async function optimize(current: State): Promise<void> {
    if (current.table === null) return;
    const started = performance.now();
    // Versions a query may still be reading are kept; older ones go at the next optimisation.
    await current.table.optimize({ cleanupOlderThan: new Date(Date.now() - KEEP_VERSIONS_MS) });
    current.unoptimized = 0;
    await writeStateOf(current);
    mergeAllowedAt = performance.now() + 3 * (performance.now() - started);
    options.log?.(`keyword index: new rows merged into the index in ${Math.round(performance.now() - started)} ms`);
  }

  /** Runs `body` as the background job (one at a time); failures are logged and retried later. */
  function background(what: string, body: () => Promise<void>, short = false): void {
    if (job !== null || closed) return;
    jobIsShort = short;
    job = exclusive(body)
      .catch((error: unknown) => {
        retryAt = Date.now() + RETRY_AFTER_MS;
        state = null;
        opening = null;
        options.log?.(`keyword index: ${what} failed, keyword queries scan exactly meanwhile: ${String(error)}`);
      })
      .finally(() => {
        job = null;
      });
  }

  /** Catches the index up in the background, batch by batch, then merges new rows into it. */
  function catchUpInBackground(): void {
    const short = state !== null && lastChange() - state.cursor <= options.syncBelow;
    background(
      'catching up',
      async () => {
        const first = state;
        if (first === null || closed) return;
        // A backlog as large as the index (a bulk load): reading the table in order is cheaper than
        // replaying every change.
        if (lastChange() - first.cursor > Math.max(REBUILD_BACKLOG, statements.count.get()?.n ?? 0)) {
          await rebuild('a large backlog of changes');
          return;
        }
        for (;;) {
          const current = state;
          if (current === null || closed) return;
          if (current.cursor >= lastChange()) break;
          if (!(await applyChanges(current, BATCH))) {
            await rebuild('changes were pruned by another process');
            return;
          }
          // A short catch-up leaves merging to a job of its own: queries wait for the first only.
          if (!short && current.unoptimized >= OPTIMIZE_EVERY) await optimize(current);
        }
      },
      short,
    );
  }

  /** First use: the saved index, caught up and checked, or a rebuild. */
  async function open(): Promise<void> {
    const loaded = await load();
    if (loaded !== null) {
      let current = true;
      while (current && loaded.cursor < lastChange()) current = await applyChanges(loaded, BATCH);
      const rows = loaded.table === null ? 0 : await loaded.table.countRows();
      if (current && rows === statements.count.get()?.n) {
        state = loaded;
        await dropOtherTables(loaded.name);
        options.log?.(`keyword index: loaded and caught up: ${rows} chunks`);
        return;
      }
    }
    await rebuild(readSaved() === null ? 'no saved index' : 'the saved index disagreed');
  }

  /**
   * Whether the index holds every change logged so far, bringing it there first when that is quick.
   * False: take the exact path (work that takes longer goes on in the background).
   */
  async function current(): Promise<boolean> {
    if (closed || !ownsDirectory() || Date.now() < retryAt) return false;
    if (job !== null) {
      if (state !== null && state.cursor >= lastChange()) return true;
      if (!jobIsShort) return false;
      // A following index applying a few changes: they are about to be in.
      await job;
      if (job !== null || closed) return false;
    }
    if (opening === null) {
      if ((statements.count.get()?.n ?? 0) > options.syncBelow || lastChange() > options.syncBelow * 4) {
        opening = Promise.resolve();
        background('building', open);
        return false;
      }
      opening = exclusive(open);
    }
    if (state === null) {
      try {
        await opening;
      } catch (error) {
        retryAt = Date.now() + RETRY_AFTER_MS;
        opening = null;
        state = null;
        options.log?.(`keyword index: could not be opened, keyword queries scan exactly meanwhile: ${String(error)}`);
        return false;
      }
    }
    const ready = state;
    if (ready === null) return false;
    const backlog = lastChange() - ready.cursor;
    if (backlog <= 0) {
      if (mergeDue(ready)) background('optimizing', () => optimize(ready));
      return true;
    }
    if (backlog > options.syncBelow) {
      catchUpInBackground();
      return false;
    }
    let ok: boolean;
    try {
      ok = await exclusive(async () => {
        while (state === ready && ready.cursor < lastChange()) {
          if (!(await applyChanges(ready, BATCH))) return false;
        }
        return state === ready;
      });
    } catch (error) {
      retryAt = Date.now() + RETRY_AFTER_MS;
      opening = null;
      state = null;
      options.log?.(`keyword index: catching up failed, keyword queries scan exactly meanwhile: ${String(error)}`);
      return false;
    }
    if (!ok) {
      background('rebuilding', () => rebuild('changes were pruned by another process'));
      return false;
    }
    if (mergeDue(ready)) background('optimizing', () => optimize(ready));
    return ready.cursor >= lastChange();
  }

  /**
   * When another process owns the directory: the table as that process last saved it, provided the
   * save holds every change logged so far (a table at the saved version is then exact); undefined
   * otherwise (the caller takes the exact path). Null: the saved index has no rows.
   */
  async function readOnlyView(): Promise<lancedb.Table | null | undefined> {
    if (closed || owner !== false || Date.now() < retryAt) return undefined;
    const saved = readSaved();
    if (saved === null || saved.cursor < lastChange()) return undefined;
    if (saved.version === 0) return null;
    if (reader !== null && reader.name === saved.table && reader.version === saved.version) return reader.table;
    try {
      const table = await (await connect()).openTable(saved.table);
      await table.checkout(saved.version);
      reader?.table.close();
      reader = { name: saved.table, version: saved.version, table };
      return table;
    } catch (error) {
      retryAt = Date.now() + RETRY_AFTER_MS / 12;
      options.log?.(`keyword index: the index another process saved could not be read: ${String(error)}`);
      return undefined;
    }
  }

  /**
   * Why keyword queries cannot use the index right now (they run exactly on FTS5 meanwhile), or
   * null when it answers: for readiness checks.
   */
  function lag(): string | null {
    if (closed) return null;
    const last = lastChange();
    if (owner === false) {
      const saved = readSaved();
      return saved !== null && saved.cursor >= last
        ? null
        : 'keyword index: kept by another process that has not saved the latest changes; keyword queries scan exactly';
    }
    if (Date.now() < retryAt) return 'keyword index: failed recently (see the log); keyword queries scan exactly';
    if (state === null) {
      // A following index is opened at start-up: until then it is being built (or loaded).
      return opening === null && !options.follow
        ? null
        : 'keyword index: being built from the database; keyword queries scan exactly';
    }
    const behind = last - state.cursor;
    return behind > options.syncBelow
      ? `keyword index: ${behind} changes behind, being applied; keyword queries scan exactly`
      : null;
  }

  /** One look of a following index: open it, or apply what changed, in the background. */
  function follow(): void {
    if (closed || job !== null || Date.now() < retryAt || !ownsDirectory()) return;
    if (opening === null) {
      opening = Promise.resolve();
      // A small index is ready in moments: queries wait for it rather than scan.
      background('building', open, (statements.count.get()?.n ?? 0) <= options.syncBelow);
    } else if (state !== null && state.cursor < lastChange()) {
      catchUpInBackground();
    } else if (state !== null && mergeDue(state)) {
      const current = state;
      background('optimizing', () => optimize(current));
    } else if (state !== null && state.unsaved > 0 && state.cursor >= lastChange()) {
      // Saved when idle, so processes reading this directory see the latest changes.
      const current = state;
      background('saving', () => writeStateOf(current), true);
    }
  }
  const follower = options.follow ? setInterval(follow, FOLLOW_EVERY_MS) : null;
  follower?.unref();
  if (options.follow) setImmediate(follow);

  return {
    /**
     * The `k` best chunks of the workspace (and of `documentIds` when given) for the words of
     * `text`, or null when the index cannot answer exactly now (see {@link createKeywordIndex}).
     */
    async search(
      text: string,
      workspaceId: string,
      documentIds: readonly string[] | undefined,
      k: number,
    ): Promise<KeywordMatches | null> {
      let table: lancedb.Table | null;
      if (await current()) {
        if (state === null) return null;
        table = state.table;
      } else {
        const view = await readOnlyView();
        if (view === undefined) return null;
        table = view;
      }
      if (table === null) return { seqs: [], scores: [], more: false };
      let where = `workspace_id = ${sqlString(workspaceId)}`;
      if (documentIds && documentIds.length > 0) {
        where += ` AND document_id IN (${documentIds.map(sqlString).join(', ')})`;
      }
      let rows: { seq: number | bigint; _score: number }[];
      try {
        rows = (await table
          .query()
          .fullTextSearch(text, { columns: 'content' })
          .where(where)
          .select(['seq', '_score'])
          .limit(k)
          .toArray()) as { seq: number | bigint; _score: number }[];
      } catch (error) {
        // The exact path answers this query, and the next ones for a while.
        retryAt = Date.now() + RETRY_AFTER_MS;
        options.log?.(`keyword index: a query failed, keyword queries scan exactly meanwhile: ${String(error)}`);
        return null;
      }
      return {
        seqs: rows.map((row) => Number(row.seq)),
        scores: rows.map((row) => row._score),
        more: rows.length >= k,
      };
    },

    /**
     * Keeps the index following the database while queries do not ask it (they take the exact path
     * by choice): opens it, or applies what changed, in the background; a following index does so
     * on its own.
     */
    keepUp(): void {
      if (!options.follow) follow();
    },

    /** The change-log position the index holds (0 before it is open). */
    cursor(): number {
      return state?.cursor ?? 0;
    },

    /** The last change logged in the database. */
    lastChange,

    lag,

    /** Waits for background work, saves the state (when it changed) and releases the directory. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (follower !== null) clearInterval(follower);
      try {
        await job;
        await queue;
        if (state !== null && state.unsaved > 0) await writeStateOf(state);
      } catch (error) {
        options.log?.(
          `keyword index: could not be saved, it will be caught up or rebuilt at the next start: ${String(error)}`,
        );
      } finally {
        state = null;
        reader?.table.close();
        reader = null;
        connection?.close();
        connection = null;
        if (owner) {
          owned.delete(options.dir);
          rmSync(path.join(options.dir, 'owner.pid'), { force: true });
        }
      }
    },
  };
}

/** A string literal of Lance's SQL filter dialect. */
function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

export type KeywordIndex = ReturnType<typeof createKeywordIndex>;
