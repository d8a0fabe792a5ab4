/**
 * Backpressure on ingestion: the backlog (versions accepted and not yet `completed` or `failed`)
 * per workspace and over the whole deployment, how fast it drains, and the admission of writes
 * that queue ingestion while the backlog is under its bounds.
 *
 * The truth is the document store (several API processes share it on the distributed runtime):
 * its counts are read at most once a second, on demand, and this process adds what it accepted
 * since the read began and what it is accepting now. A write is thus checked from memory, and
 * the bound holds within this process exactly; other processes' writes count from the next read.
 */
import { KbError } from '../errors/kb-error.ts';
import type { Logger } from '../model/logger.model.ts';
import type { BacklogCounts, PendingVersions } from '../ports/document-store/document-store.port.ts';

/** How old the store's counts may be before a write reads them again (in the background). */
export const BACKLOG_REFRESH_MS = 1000;
/** How old they may be before a write waits for a fresh read (a process that was idle). */
const BACKLOG_STALE_MS = 2000;
/** The window the drain rate is measured over: versions completed in the last this many ms. */
export const DRAIN_WINDOW_MS = 15_000;
/** `Retry-After` when nothing was completed during the window (nothing to derive it from). */
export const DEFAULT_RETRY_AFTER_S = 5;
/** The longest `Retry-After` given, however slowly the backlog drains. */
export const MAX_RETRY_AFTER_S = 60;

export interface BacklogLimits {
  /** Backlog of one workspace at which its writes are refused (429); 0: no bound. */
  readonly maxPerWorkspace: number;
  /** Backlog of every workspace together at which writes are refused (503); 0: no bound. */
  readonly maxTotal: number;
}

/** The backlog as this process counts it. */
export interface BacklogView {
  /** Unfinished versions per workspace (workspaces with none are absent). */
  readonly workspaces: Readonly<Record<string, number>>;
  readonly total: number;
  /** Versions completed per second over the last {@link DRAIN_WINDOW_MS}, every workspace. */
  readonly drainPerSecond: number;
  /** The same, per workspace. */
  readonly workspaceDrainPerSecond: Readonly<Record<string, number>>;
  readonly limits: BacklogLimits;
  /** When the store's counts were read (ISO 8601); null when they never could be. */
  readonly readAt: string | null;
}

/** Room taken for one write that queues ingestion. */
export interface BacklogTicket {
  /** The write queued its version: it counts in the backlog until the next read of the store does. */
  accepted(): void;
  /** The write ended without queuing anything (refused, replayed, failed): the room is given back. Idempotent. */
  release(): void;
}

export interface IngestionBacklogService {
  /**
   * Takes room for one write of `workspaceId` that queues ingestion, or throws `backlog-full`
   * (the workspace's backlog is at its bound, 429) or `deployment-backlog-full` (every
   * workspace's together, 503), each with `retryAfter` from the drain rate. Call `accepted` or
   * `release` on the ticket once the write has ended.
   */
  admit(workspaceId: string): Promise<BacklogTicket>;
  /**
   * Counts a version queued by a write that is never refused for the backlog (a metadata change
   * whose version must be ingested), until the next read of the store does.
   */
  noteQueued(workspaceId: string): void;
  /**
   * The backlog now (the store's counts read again when they are older than a second); rejects
   * when the last read of the store failed.
   */
  view(): Promise<BacklogView>;
}

/**
 * Seconds until `excess` more versions have drained at `drainPerSecond`: at least 1, at most
 * {@link MAX_RETRY_AFTER_S}; {@link DEFAULT_RETRY_AFTER_S} when nothing drained lately.
 */
export function backlogRetryAfter(excess: number, drainPerSecond: number): number {
  if (!(drainPerSecond > 0)) return DEFAULT_RETRY_AFTER_S;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(Math.max(1, excess) / drainPerSecond)));
}

const NO_COUNTS: BacklogCounts = { unfinished: {}, completed: {} };

const add = (into: Map<string, number>, key: string, by: number) => {
  const next = (into.get(key) ?? 0) + by;
  if (next <= 0) into.delete(key);
  else into.set(key, next);
};

const sum = (values: Iterable<number>) => {
  let total = 0;
  for (const value of values) total += value;
  return total;
};

export function createIngestionBacklogService(deps: {
  readonly store: PendingVersions;
  readonly limits: BacklogLimits;
  readonly logger?: Logger;
  /** The clock (tests). */
  readonly now?: () => number;
}): IngestionBacklogService {
  const { store, limits } = deps;
  const now = deps.now ?? Date.now;
  let counts: BacklogCounts = NO_COUNTS;
  /** When the counts were read (the read's start); 0: never. */
  let readAt = 0;
  /** When the last read began, whether it succeeded or not. */
  let attemptedAt = 0;
  /** Why the last read failed; null when it succeeded. */
  let readError: unknown = null;
  let reading: Promise<void> | null = null;
  /** Versions this process queued since the running read (or the last one) began. */
  let sinceRead = new Map<string, number>();
  /** …and since the read before it began, while a read runs (that read may or may not see them). */
  let beforeRead = new Map<string, number>();
  /** Writes admitted and not yet ended. */
  const inFlight = new Map<string, number>();
  let warned = false;

  const read = (): Promise<void> => {
    reading ??= (async () => {
      const started = now();
      attemptedAt = started;
      beforeRead = sinceRead;
      sinceRead = new Map();
      try {
        counts = await store.countBacklog(new Date(started - DRAIN_WINDOW_MS).toISOString());
        readAt = started;
        beforeRead = new Map();
        readError = null;
        warned = false;
      } catch (error) {
        readError = error;
        // Counted again from the next read; until then what this process queued still counts.
        for (const [workspace, n] of beforeRead) add(sinceRead, workspace, n);
        beforeRead = new Map();
        if (!warned) deps.logger?.warn({ err: String(error) }, 'could not count the ingestion backlog; next time');
        warned = true;
      } finally {
        reading = null;
      }
    })();
    return reading;
  };

  /**
   * Reads the counts again when they are a second old, in the background; waits for the read when
   * they are stale (an idle process). A failed read is tried again a second later, not at once.
   */
  const fresh = async () => {
    if (now() - attemptedAt < BACKLOG_REFRESH_MS) return;
    if (now() - readAt >= BACKLOG_STALE_MS) await read();
    else void read();
  };

  const backlogOf = (workspace: string) =>
    (counts.unfinished[workspace] ?? 0) +
    (beforeRead.get(workspace) ?? 0) +
    (sinceRead.get(workspace) ?? 0) +
    (inFlight.get(workspace) ?? 0);
  const totalBacklog = () =>
    sum(Object.values(counts.unfinished)) + sum(beforeRead.values()) + sum(sinceRead.values()) + sum(inFlight.values());
  const rateOf = (completed: number) => completed / (DRAIN_WINDOW_MS / 1000);

  return {
    async admit(workspaceId) {
      if (limits.maxPerWorkspace > 0 || limits.maxTotal > 0) {
        await fresh();
        const mine = backlogOf(workspaceId);
        if (limits.maxPerWorkspace > 0 && mine >= limits.maxPerWorkspace) {
          const retryAfter = backlogRetryAfter(
            mine - limits.maxPerWorkspace + 1,
            rateOf(counts.completed[workspaceId] ?? 0),
          );
          throw new KbError(
            'backlog-full',
            `This workspace has ${mine} versions waiting for ingestion, as many as it may (KB_MAX_BACKLOG_PER_WORKSPACE=${limits.maxPerWorkspace}); nothing was stored. Retry in ${retryAfter} s, when ingestion has caught up; reads, searches, metadata changes and deletes are not affected.`,
            { retryAfter },
          );
        }
        const total = totalBacklog();
        if (limits.maxTotal > 0 && total >= limits.maxTotal) {
          const retryAfter = backlogRetryAfter(
            total - limits.maxTotal + 1,
            rateOf(sum(Object.values(counts.completed))),
          );
          throw new KbError(
            'deployment-backlog-full',
            `The service has ${total} versions waiting for ingestion, as many as it takes (KB_MAX_BACKLOG=${limits.maxTotal}); nothing was stored. Retry in ${retryAfter} s, when ingestion has caught up.`,
            { retryAfter },
          );
        }
      }
      add(inFlight, workspaceId, 1);
      let ended = false;
      const end = (queued: boolean) => {
        if (ended) return;
        ended = true;
        add(inFlight, workspaceId, -1);
        if (queued) add(sinceRead, workspaceId, 1);
      };
      return { accepted: () => end(true), release: () => end(false) };
    },

    noteQueued(workspaceId) {
      add(sinceRead, workspaceId, 1);
    },

    async view() {
      if (now() - attemptedAt >= BACKLOG_REFRESH_MS) await read();
      if (readError !== null) throw readError;
      const workspaces = new Set([
        ...Object.keys(counts.unfinished),
        ...beforeRead.keys(),
        ...sinceRead.keys(),
        ...inFlight.keys(),
      ]);
      return {
        workspaces: Object.fromEntries([...workspaces].map((w) => [w, backlogOf(w)])),
        total: totalBacklog(),
        drainPerSecond: rateOf(sum(Object.values(counts.completed))),
        workspaceDrainPerSecond: Object.fromEntries(Object.entries(counts.completed).map(([w, n]) => [w, rateOf(n)])),
        limits,
        readAt: readAt === 0 ? null : new Date(readAt).toISOString(),
      };
    },
  };
}
