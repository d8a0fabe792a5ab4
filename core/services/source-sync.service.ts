import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import {
  type RunClaim,
  type RunCounts,
  type RunError,
  type RunRecord,
  type SourceRecord,
  type SourceStore,
  ZERO_COUNTS,
} from '../ports/source-store/source-store.port.ts';
import type { SourceContent, SourceReader } from '../sources/source-reader.ts';
import { isoNow } from '../util/time.ts';
import type { DocumentWritesService } from './document-writes.service.ts';
import { createSourceItemSync, RunLeft, sourceActorContext } from './source-sync-items.ts';
import type { UploadStagingService } from './upload-staging.service.ts';

export { itemName, SYNC_ADDED, SYNC_CHANGED } from './source-sync-items.ts';

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

const errorOf = (item: string | null, error: unknown): RunError =>
  error instanceof KbError
    ? { item, code: error.code, detail: error.message }
    : { item, code: 'internal-error', detail: error instanceof Error ? error.message : String(error) };

type Ending = 'ended' | 'taken-over' | 'left';

class RunTakenOver extends Error {}

/**
 * The sync engine: the runs of a source. A run lists the source and syncs each item (see
 * `createSourceItemSync`: unchanged items cost nothing, changed ones become versions, new ones
 * documents), as the source itself (audit actor `{type: "source", id, name}`), then deletes the
 * documents of items gone from the source (not purged) — unless that is more than
 * `maxDeleteFraction` of the source's documents and the run does not allow it, when none is
 * deleted and they are counted as `deletions_held`.
 *
 * Promises: one run of a source at a time (claimed in the source store); a failing item fails only
 * itself (counted and listed); a run that cannot read the source at all ends `failed` with the code
 * of why. A run interrupted anywhere (a crash) and run again writes no second version of an item
 * already written. A run's end is recorded once, then `onRunEnded` is called.
 */
export function createSourceSyncService(deps: SourceSyncDeps): SourceSyncService {
  const { store, logger } = deps;
  // A run resumed after a crash goes through every item again: those written before the crash
  // are found unchanged (or, written but not recorded, recorded without a second version).
  const going = new Set<Promise<unknown>>();
  /** Contents being read: closed when the process stops, so that a long read does not hold it. */
  const reading = new Set<SourceContent>();
  let closed = false;
  const items = createSourceItemSync({ ...deps, closed: () => closed, reading });

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
    const ctx = sourceActorContext(source, run.id);
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
          counts[await items.syncItem(ctx, source, reader, listed, known.get(listed.key))]++;
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
      await items.removeGone(
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
