import { createHash } from 'node:crypto';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import {
  type ItemRecord,
  type RunClaim,
  type RunCounts,
  type RunError,
  type RunRecord,
  type SourceRecord,
  type SourceStore,
  ZERO_COUNTS,
} from '../ports/source-store/source-store.port.ts';
import type { SourceContent, SourceEntry, SourceReader } from '../sources/source-reader.ts';
import { isoNow } from '../util/time.ts';
import type { DocumentWritesService } from './document-writes.service.ts';
import type { RequestContext } from './request-context.ts';
import type { UploadStagingService } from './upload-staging.service.ts';

/** The change reason of a version a sync wrote because its item changed at the source. */
export const SYNC_CHANGED = 'sync: changed at source';
/** The change reason of a document a sync created for a new item. */
export const SYNC_ADDED = 'sync: added at source';
/** A run lists at most this many failing items (its counts still count them all). */
export const MAX_RUN_ERRORS = 200;

export interface SourceSyncService {
  /**
   * Claims a run of `source` and runs it in the background; 409 `sync-running` naming the
   * running run when one is going (in any process sharing the source store).
   */
  start(source: SourceRecord, options: { readonly allowMassDelete: boolean }): Promise<RunRecord>;
  /** Claims a run, or returns null when one is going (the scheduler's way in). */
  tryStart(source: SourceRecord, options: { readonly allowMassDelete: boolean }): Promise<RunRecord | null>;
  /**
   * Runs a claimed run in this process until it ends (a sync request taken from the message log).
   * While another process's heartbeat on it is fresh it waits; then it resumes the run. Resolves
   * at once for a run that ended or does not exist; rejects when this process stops before the
   * run ended (so that the request is delivered again).
   */
  runClaimed(request: {
    readonly workspaceId: string;
    readonly sourceId: string;
    readonly runId: string;
  }): Promise<void>;
  /** Resumes in the background every run left `running` (the embedded runtime's start-up: its one process stopped). */
  resumeInterrupted(): Promise<void>;
  /** Resolves when every run this process started has ended. */
  idle(): Promise<void>;
  /**
   * Stops starting runs, ends the reads under way (their runs stay `running`, to be resumed),
   * and waits for the runs going to stop.
   */
  close(): Promise<void>;
}

export interface SourceSyncDeps {
  readonly store: SourceStore;
  readonly documents: DocumentStore;
  readonly documentWrites: DocumentWritesService;
  readonly uploads: UploadStagingService;
  readonly readerFor: (source: SourceRecord) => SourceReader;
  readonly maxUploadBytes: number;
  /** A run deleting more than this fraction of the source's documents deletes none (unless allowed). */
  readonly maxDeleteFraction: number;
  /** How often a going run records its counts and its heartbeat. */
  readonly heartbeatMs: number;
  /** A run whose heartbeat is older than this is taken over by the next claim. */
  readonly staleMs: number;
  readonly logger: Logger;
  /**
   * Hands a claimed run to whichever process will run it (the distributed runtime publishes it
   * on the message log). Absent: the run runs in this process, in the background.
   */
  readonly dispatch?: (source: SourceRecord, run: RunRecord) => Promise<void>;
  /**
   * Called once when a run ends, completed or failed, after it is recorded (the one place where
   * a run's end is known, e.g. to publish an event). Its errors are logged, never fatal.
   */
  readonly onRunEnded?: (source: SourceRecord, run: RunRecord) => Promise<void>;
}

type Outcome = 'created' | 'updated' | 'unchanged';

/** True when the listing alone shows the item is as the last run saw it. */
function sameListing(entry: SourceEntry, known: ItemRecord): boolean {
  if (entry.etag !== null && entry.etag === known.etag) {
    return entry.sizeBytes === null || entry.sizeBytes === known.sizeBytes;
  }
  return (
    entry.sizeBytes !== null &&
    entry.mtimeMs !== null &&
    entry.sizeBytes === known.sizeBytes &&
    entry.mtimeMs === known.mtimeMs
  );
}

async function sha256Of(content: SourceContent): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(content.open(), hash);
  return hash.digest('hex');
}

/** The document name of an item: the file name of a path or key, the last segment of a URL. */
export function itemName(key: string): string {
  if (/^https?:\/\//i.test(key)) {
    const url = new URL(key);
    const last = url.pathname.split('/').filter(Boolean).at(-1);
    return last ? decodeURIComponent(last) : url.hostname;
  }
  return path.posix.basename(key) || key;
}

const errorOf = (item: string | null, error: unknown): RunError =>
  error instanceof KbError
    ? { item, code: error.code, detail: error.message }
    : { item, code: 'internal-error', detail: error instanceof Error ? error.message : String(error) };

type Ending = 'ended' | 'taken-over' | 'left';

class RunTakenOver extends Error {}
/** The process is shutting down: the run stays `running` and is resumed later (see `runClaimed`, `resumeInterrupted`). */
class RunLeft extends Error {}

/**
 * The sync engine. A run lists the source, and for each item decides from the listing (size +
 * mtime, ETag) or the source's own answer (HTTP 304) whether it changed, then from the SHA-256
 * of its content; an unchanged item costs no staging, no parse, no embedding. A changed item
 * becomes a new version through the same write path as a PUT (change reason
 * {@link SYNC_CHANGED}, created by `source:<id>`), a new one a new document, an item gone from
 * the source a deleted document (not purged) — unless that is more than `maxDeleteFraction` of
 * the source's documents and the run does not allow it, when none is deleted and they are
 * counted as `deletions_held`.
 *
 * Promises: a failing item fails only itself (counted and listed); a run that cannot read the
 * source at all ends `failed` with the code of why. A run interrupted anywhere (a crash) and run
 * again writes no second version of an item already written: the item's record names its
 * document before the document is created, and an item whose document already holds the
 * content is only recorded.
 */
export function createSourceSyncService(deps: SourceSyncDeps): SourceSyncService {
  const { store, documents, documentWrites, uploads, logger } = deps;
  // A run resumed after a crash goes through every item again: those written before the crash
  // are found unchanged (or, written but not recorded, recorded without a second version).
  const going = new Set<Promise<unknown>>();
  /** Contents being read: closed when the process stops, so that a long read does not hold it. */
  const reading = new Set<SourceContent>();
  let closed = false;

  function newRun(source: SourceRecord, allowMassDelete: boolean): RunRecord {
    const now = isoNow();
    return {
      id: uuidv7(),
      sourceId: source.id,
      workspaceId: source.workspaceId,
      status: 'running',
      allowMassDelete,
      startedAt: now,
      finishedAt: null,
      heartbeatAt: now,
      counts: ZERO_COUNTS,
      errors: [],
    };
  }

  const staleBefore = () => new Date(Date.now() - deps.staleMs).toISOString();

  /** Runs `run` in this process, counted among the going ones. */
  function track(source: SourceRecord, run: RunRecord): Promise<Ending> {
    const work = execute(source, run);
    going.add(work);
    void work.finally(() => going.delete(work)).catch(() => {});
    return work;
  }

  function launch(source: SourceRecord, run: RunRecord): void {
    track(source, run).catch((error: unknown) =>
      logger.error({ err: String(error), source: source.id, run: run.id }, 'a source sync stopped unexpectedly'),
    );
  }

  async function tryStart(source: SourceRecord, { allowMassDelete }: { allowMassDelete: boolean }): Promise<RunClaim> {
    if (closed) throw new KbError('service-unavailable', 'The service is shutting down.');
    const claim = await store.claimRun(newRun(source, allowMassDelete), staleBefore());
    if ('running' in claim) return { running: claim.running };
    if (!deps.dispatch) {
      launch(source, claim.started);
      return claim;
    }
    try {
      await deps.dispatch(source, claim.started);
    } catch (error) {
      await recordEnd(source, claim.started, 'failed', ZERO_COUNTS, [errorOf(null, error)]).catch(() => {});
      throw error;
    }
    return claim;
  }

  /** Records a run's end: the one place a run's completion or failure is known. */
  async function recordEnd(
    source: SourceRecord,
    run: RunRecord,
    status: 'completed' | 'failed',
    counts: RunCounts,
    errors: RunError[],
  ): Promise<RunRecord> {
    const finishedAt = isoNow();
    if (!(await store.finishRun(run.id, { status, counts, errors, finishedAt }))) {
      throw new RunTakenOver();
    }
    const ended: RunRecord = { ...run, status, counts, errors, finishedAt };
    logger.info({ source: source.id, run: run.id, status, counts }, `source sync ${status}`);
    if (deps.onRunEnded) {
      await deps
        .onRunEnded(source, ended)
        .catch((error: unknown) =>
          logger.warn({ err: String(error), run: run.id }, 'after a source sync ended, its follow-up failed'),
        );
    }
    return ended;
  }

  async function execute(source: SourceRecord, run: RunRecord): Promise<Ending> {
    const ctx: RequestContext = { workspaceId: source.workspaceId, keyId: `source:${source.id}`, traceId: run.id };
    const counts = { ...ZERO_COUNTS };
    const errors: RunError[] = [];
    const fail = (error: RunError) => {
      counts.failed++;
      if (errors.length < MAX_RUN_ERRORS) errors.push(error);
    };
    let lost = false;
    const progress = async () => {
      if (!(await store.updateRun(run.id, { counts: { ...counts }, errors: [...errors], heartbeatAt: isoNow() }))) {
        lost = true;
      }
    };
    // Taking the run: a fresh heartbeat tells other processes it is being run.
    if (!(await store.updateRun(run.id, { counts, errors, heartbeatAt: isoNow() }))) return 'taken-over';
    const beat = setInterval(() => {
      progress().catch((error: unknown) => logger.warn({ err: String(error), run: run.id }, 'a sync heartbeat failed'));
    }, deps.heartbeatMs);
    beat.unref();
    try {
      const reader = deps.readerFor(source);
      const known = new Map((await store.listItems(source.id)).map((item) => [item.itemKey, item]));
      const seen = new Set<string>();
      // A capped listing (a sitemap past its page cap) is incomplete: what it left out is not gone.
      let listingCapped = false;
      let sinceProgress = 0;
      for await (const listed of reader.list()) {
        if (lost) throw new RunTakenOver();
        if (closed) throw new RunLeft();
        counts.seen++;
        if ('failure' in listed) {
          seen.add(listed.failure.item);
          if (listed.failure.code === 'source-capped') listingCapped = true;
          fail(listed.failure);
          continue;
        }
        seen.add(listed.key);
        try {
          counts[await syncItem(ctx, source, reader, listed, known.get(listed.key))]++;
        } catch (error) {
          // Stopped by the shutdown: the item is not failed, the run resumes later.
          if (closed) throw new RunLeft();
          fail(errorOf(listed.key, error));
        }
        if (++sinceProgress >= 100) {
          sinceProgress = 0;
          await progress();
        }
      }
      if (lost) throw new RunTakenOver();
      await removeGone(
        ctx,
        source,
        run,
        [...known.values()].filter((item) => !seen.has(item.itemKey)),
        known.size,
        counts,
        errors,
        listingCapped,
      );
      await recordEnd(source, run, 'completed', counts, errors);
      return 'ended';
    } catch (error) {
      if (error instanceof RunTakenOver) {
        logger.warn({ source: source.id, run: run.id }, 'another process took this source sync over; stopping');
        return 'taken-over';
      }
      if (error instanceof RunLeft) {
        logger.info({ source: source.id, run: run.id }, 'shutting down: this source sync resumes later');
        return 'left';
      }
      const reason = errorOf(null, error);
      try {
        await recordEnd(source, run, 'failed', counts, [reason, ...errors].slice(0, MAX_RUN_ERRORS));
      } catch (ending) {
        if (ending instanceof RunTakenOver) return 'taken-over';
        throw ending;
      }
      return 'ended';
    } finally {
      clearInterval(beat);
    }
  }

  async function removeGone(
    ctx: RequestContext,
    source: SourceRecord,
    run: RunRecord,
    gone: ItemRecord[],
    total: number,
    counts: { deleted: number; deletionsHeld: number },
    errors: RunError[],
    listingCapped: boolean,
  ): Promise<void> {
    if (gone.length === 0) return;
    if (listingCapped) {
      counts.deletionsHeld = gone.length;
      errors.unshift({
        item: null,
        code: 'deletions-held',
        detail: `The listing stopped at its cap, so ${gone.length} of the source's ${total} documents that it did not reach were kept; none was deleted.`,
      });
      return;
    }
    if (!run.allowMassDelete && gone.length > deps.maxDeleteFraction * total) {
      counts.deletionsHeld = gone.length;
      errors.unshift({
        item: null,
        code: 'deletions-held',
        detail: `${gone.length} of the source's ${total} documents are gone at the source, more than the fraction ${deps.maxDeleteFraction} (KB_SOURCE_MAX_DELETE_FRACTION); none was deleted. Sync with allow_mass_delete=true to delete them.`,
      });
      return;
    }
    for (const item of gone) {
      try {
        await documentWrites.remove(ctx, item.documentId, { purge: false });
      } catch (error) {
        // Deleted already (by hand, or by this run before a crash): the item only goes.
        if (!(error instanceof KbError && error.code === 'not-found')) throw error;
      }
      await store.deleteItem(source.id, item.itemKey);
      counts.deleted++;
    }
  }

  async function syncItem(
    ctx: RequestContext,
    source: SourceRecord,
    reader: SourceReader,
    entry: SourceEntry,
    known: ItemRecord | undefined,
  ): Promise<Outcome> {
    if (known && known.sha256 !== null && sameListing(entry, known)) return 'unchanged';
    if (entry.sizeBytes !== null && entry.sizeBytes > deps.maxUploadBytes) {
      throw new KbError(
        'payload-too-large',
        `The item is ${entry.sizeBytes} bytes; the limit is ${deps.maxUploadBytes} bytes.`,
      );
    }
    const content = await reader.read(entry, known);
    if (content === 'not-modified' && known && known.sha256 !== null) return 'unchanged';
    if (content === 'not-modified')
      throw new KbError('source-unreachable', 'The source answered "not modified" for an item it never sent.');
    reading.add(content);
    try {
      if (closed) throw new RunLeft();
      return await writeItem(ctx, source, entry, known, content);
    } finally {
      reading.delete(content);
      content.close?.();
    }
  }

  /** Writes an item read as `content`: recorded unchanged, a new version, or a new document. */
  async function writeItem(
    ctx: RequestContext,
    source: SourceRecord,
    entry: SourceEntry,
    known: ItemRecord | undefined,
    content: SourceContent,
  ): Promise<Outcome> {
    const sha256 = await sha256Of(content);
    const record = (documentId: string, hash: string | null): ItemRecord => ({
      sourceId: source.id,
      itemKey: entry.key,
      documentId,
      sizeBytes: entry.sizeBytes,
      mtimeMs: entry.mtimeMs,
      etag: content.etag ?? entry.etag,
      lastModified: content.lastModified ?? entry.lastModified,
      sha256: hash,
    });
    if (known && known.sha256 === sha256) {
      await store.putItem(record(known.documentId, sha256));
      return 'unchanged';
    }
    const stageFor = (documentId: string) =>
      uploads.stage({
        workspaceId: source.workspaceId,
        documentId,
        stream: content.open(),
        filename: itemName(entry.key),
        ...(content.contentType ? { declaredType: content.contentType } : {}),
      });

    const current = known ? await documents.getDocument(source.workspaceId, known.documentId) : null;
    if (known && current) {
      const outcome: Outcome = known.sha256 === null ? 'created' : 'updated';
      // Written already by a run that stopped before recording it: only recorded now.
      if (current.latest.contentHash !== sha256) {
        const staged = await stageFor(current.id);
        await documentWrites.replaceContent(ctx, current.id, {
          staged,
          metadata: { ...source.metadata },
          changeReason: SYNC_CHANGED,
        });
      }
      await store.putItem(record(current.id, sha256));
      return outcome;
    }
    // A new item, or one whose document is gone. An id recorded by an interrupted creation is
    // reused unless a document was made with it (and deleted since).
    const reuse = known && known.sha256 === null && !(await documents.getVersion(known.documentId, 1));
    const documentId = reuse ? known.documentId : uuidv7();
    const staged = await stageFor(documentId);
    try {
      await store.putItem(record(documentId, null));
    } catch (error) {
      await uploads.discard(staged).catch(() => {});
      throw error;
    }
    await documentWrites.create(ctx, {
      staged,
      metadata: { ...source.metadata },
      source: source.name,
      sourceItem: entry.key,
      changeReason: SYNC_ADDED,
    });
    await store.putItem(record(documentId, sha256));
    return 'created';
  }

  return {
    async start(source, options) {
      const outcome = await tryStart(source, options);
      if ('running' in outcome) {
        throw new KbError(
          'sync-running',
          `Run ${outcome.running.id} of source ${source.name} is running (since ${outcome.running.startedAt}); wait for it to end.`,
        );
      }
      return outcome.started;
    },

    async tryStart(source, options) {
      const outcome = await tryStart(source, options);
      return 'started' in outcome ? outcome.started : null;
    },

    async runClaimed({ workspaceId, sourceId, runId }) {
      const pollMs = Math.max(100, Math.min(1000, Math.floor(deps.staleMs / 4)));
      for (;;) {
        const run = await store.getRun(sourceId, runId);
        if (run?.status !== 'running') return;
        // Being run elsewhere: its heartbeat moved past its start and is fresh.
        const busy = run.heartbeatAt > run.startedAt && run.heartbeatAt >= staleBefore();
        if (!busy) {
          const source = await store.getSource(workspaceId, sourceId);
          if (!source) return;
          if ((await track(source, run)) === 'left') throw new Error(`Stopped before run ${runId} ended.`);
          return;
        }
        if (closed) throw new Error(`Stopped before run ${runId} ended.`);
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },

    async resumeInterrupted() {
      for (const run of await store.listRunningRuns()) {
        const source = await store.getSource(run.workspaceId, run.sourceId);
        if (!source) continue;
        logger.info({ source: source.id, run: run.id }, 'resuming an interrupted source sync');
        launch(source, run);
      }
    },

    async idle() {
      while (going.size > 0) await Promise.allSettled([...going]);
    },

    async close() {
      // Going runs stop at their next item and are resumed later (see `runClaimed`, `resumeInterrupted`);
      // the reads going end now.
      closed = true;
      for (const content of reading) content.close?.();
      while (going.size > 0) await Promise.allSettled([...going]);
    },
  };
}
