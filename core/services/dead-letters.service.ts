import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import {
  type DeadLetter,
  type DeadLetterReplay,
  STAGE_NAMES,
  type StageName,
  stageInputTopic,
  type Topics,
} from '../events/events.ts';
import { publishEvent } from '../events/publish-event.ts';
import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { IdempotencyStore } from '../ports/idempotency-store/idempotency-store.port.ts';
import type { MessageLog, MessageLogAdmin } from '../ports/message-log/message-log.port.ts';
import { isoNow } from '../util/time.ts';

/** A dead letter as operators see it: the failure, the event's document, and whether it was replayed. */
export interface DeadLetterView {
  /** The dead letter's id (the same for every copy a redelivered message left). */
  id: string;
  stage: StageName;
  document_id: string | null;
  workspace_id: string | null;
  version: number | null;
  error_code: string;
  error_message: string;
  attempts: number;
  dead_lettered_at: string;
  /** Where the event was read from when the stage gave up on it. */
  source: { topic: string; partition: number; offset: string };
  /** How many times the dead-letter topic holds it (more than 1 when the failure was recorded again after a redelivery). */
  copies: number;
  /** Null while the dead letter waits for a replay. */
  replay: {
    at: string;
    outcome: 'replayed' | 'skipped';
    /** Why nothing was re-driven, for `skipped`. */
    detail: string;
    by: string;
  } | null;
}

/** Dead letters of one stage: all retained, and those not replayed yet. */
export interface DeadLetterCountView {
  stage: StageName;
  total: number;
  pending: number;
}

export interface DeadLetterFilter {
  readonly stage?: StageName;
  readonly workspaceId?: string;
  /** `pending`: not replayed yet; `replayed`: replayed or skipped; `all` (default). */
  readonly state?: 'pending' | 'replayed' | 'all';
}

export interface DeadLetterListView {
  dead_letters: DeadLetterView[];
  /** Per stage, over the same stage and workspace filter (whatever `state` is). */
  counts: DeadLetterCountView[];
}

export interface DeadLetterReplayView {
  /** Dead letters whose event went back to its stage's input topic. */
  replayed: number;
  /** Dead letters with nothing left to re-drive (the version completed or is gone), marked replayed. */
  skipped: number;
  /** Each dead letter this replay handled, with its outcome. */
  dead_letters: DeadLetterView[];
}

export interface DeadLettersService {
  /** The dead letters retained now, read from the log (fresh), oldest first. */
  list(filter: DeadLetterFilter): Promise<DeadLetterListView>;
  /**
   * Re-drives every pending dead letter matching the filter, oldest first: a failed version goes
   * back to `processing` (error cleared), the event goes back to its stage's input topic, and the
   * replay is recorded, so the dead letter is never replayed twice. A dead letter whose version
   * completed meanwhile or is gone is recorded as `skipped`. Replays run one at a time in a process;
   * across processes each dead letter is claimed first (in the idempotency store every process
   * shares), so of replays running at once exactly one handles it, and the others leave it out of
   * their answer. A claim whose process died before it recorded the replay lapses after `leaseMs`,
   * and a later replay takes the dead letter over (its event may then be re-driven twice, which its
   * stage handles as any redelivery).
   */
  replay(filter: Omit<DeadLetterFilter, 'state'>, replayedBy: string): Promise<DeadLetterReplayView>;
  /**
   * Counts per stage (and for one workspace when given) from a reading at most `maxAgeMs` old
   * (default 15 s): a stale one is answered at once while a fresh one is read. For metrics,
   * readiness and the dashboard; rejects only when no reading ever succeeded.
   */
  counts(options?: { workspaceId?: string; maxAgeMs?: number }): Promise<DeadLetterCountView[]>;
  /** The last counts read (all workspaces), without waiting; null before the first reading. Starts a reading when stale. */
  peekCounts(): DeadLetterCountView[] | null;
}

interface Snapshot {
  readonly at: number;
  readonly letters: DeadLetterView[];
  /** The dead letters' events, by id (not part of the view). */
  readonly payloads: Map<string, { key: string; payload: string }>;
}

const DEFAULT_MAX_AGE_MS = 15_000;

/** The idempotency store's scope of dead-letter claims (apart from every client's, which name a workspace). */
const REPLAY_SCOPE = 'kb:dead-letter-replays';

function parsePayload(payload: string): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(payload) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function matches(letter: DeadLetterView, filter: DeadLetterFilter): boolean {
  if (filter.stage && letter.stage !== filter.stage) return false;
  if (filter.workspaceId !== undefined && letter.workspace_id !== filter.workspaceId) return false;
  if (filter.state === 'pending' && letter.replay !== null) return false;
  if (filter.state === 'replayed' && letter.replay === null) return false;
  return true;
}

function countsOf(letters: readonly DeadLetterView[], filter: DeadLetterFilter): DeadLetterCountView[] {
  const stages = filter.stage ? [filter.stage] : [...STAGE_NAMES];
  return stages.map((stage) => {
    const own = letters.filter((l) => matches(l, { ...filter, stage, state: 'all' }));
    return { stage, total: own.length, pending: own.filter((l) => l.replay === null).length };
  });
}

/**
 * Dead letters for operators, in both runtimes: the stages' dead-letter topics (`kb.dlq.<stage>`)
 * and the replay records (`kb.dlq.replays`) read whole from the message log. A dead letter is
 * pending until a replay record names it.
 */
export function createDeadLettersService(deps: {
  log: MessageLog;
  logAdmin: MessageLogAdmin;
  documents: DocumentStore;
  topics: Topics;
  logger: Logger;
  /** Where each dead letter is claimed before it is replayed (shared by every process). */
  claims: IdempotencyStore;
  /** How long a claim holds a dead letter before another replay may take it over. */
  leaseMs: number;
  /** How long a handled dead letter's claim is kept (its replay record says the rest). */
  keepMs: number;
}): DeadLettersService {
  const { topics } = deps;
  let snapshot: Snapshot | null = null;
  let reading: Promise<Snapshot> | null = null;
  let replaying: Promise<unknown> = Promise.resolve();

  async function read(): Promise<Snapshot> {
    const [perStage, replayMessages] = await Promise.all([
      Promise.all(
        STAGE_NAMES.map(async (stage) =>
          (await deps.logAdmin.readRetained(topics.deadLetter(stage))).map((message) => ({ stage, message })),
        ),
      ),
      deps.logAdmin.readRetained(topics.deadLetterReplays),
    ]);
    const replays = new Map<string, DeadLetterReplay>();
    for (const message of replayMessages) {
      const record = message.value as unknown as DeadLetterReplay;
      if (!replays.has(record.dead_letter_id)) replays.set(record.dead_letter_id, record);
    }
    const byId = new Map<string, DeadLetterView>();
    const payloads = new Map<string, { key: string; payload: string }>();
    for (const { stage, message } of perStage.flat()) {
      const letter = message.value as unknown as DeadLetter;
      const seen = byId.get(letter.event_id);
      if (seen) {
        seen.copies += 1;
        continue;
      }
      const event = parsePayload(letter.payload);
      const version = Number(event?.version);
      const replay = replays.get(letter.event_id);
      byId.set(letter.event_id, {
        id: letter.event_id,
        stage,
        document_id: typeof event?.document_id === 'string' ? event.document_id : null,
        workspace_id: typeof event?.workspace_id === 'string' ? event.workspace_id : null,
        version: Number.isInteger(version) && version >= 1 ? version : null,
        error_code: letter.error_code,
        error_message: letter.error_message,
        attempts: letter.attempts,
        dead_lettered_at: letter.occurred_at,
        source: { topic: letter.source_topic, partition: letter.source_partition, offset: letter.source_offset },
        copies: 1,
        replay: replay
          ? { at: replay.occurred_at, outcome: replay.outcome, detail: replay.detail, by: replay.replayed_by }
          : null,
      });
      payloads.set(letter.event_id, { key: message.key, payload: letter.payload });
    }
    const letters = [...byId.values()].sort((a, b) => a.dead_lettered_at.localeCompare(b.dead_lettered_at));
    const fresh: Snapshot = { at: Date.now(), letters, payloads };
    if (!snapshot || snapshot.at <= fresh.at) snapshot = fresh;
    return fresh;
  }

  /** One reading shared by every caller asking meanwhile. */
  function readShared(): Promise<Snapshot> {
    reading ??= read().finally(() => {
      reading = null;
    });
    return reading;
  }

  async function recent(maxAgeMs: number): Promise<Snapshot> {
    if (snapshot && Date.now() - snapshot.at <= maxAgeMs) return snapshot;
    if (snapshot) {
      // Stale: answer with it now, read a fresh one for the next caller.
      readShared().catch((error: unknown) =>
        deps.logger.warn({ err: String(error) }, 'could not read the dead-letter topics'),
      );
      return snapshot;
    }
    return readShared();
  }

  /**
   * Claims a dead letter for this replay: null when another replay holds it or handled it (the
   * records this replay read may predate that one's record).
   */
  async function claimLetter(id: string) {
    const token = randomUUID();
    const nowMs = Date.now();
    const outcome = await deps.claims.claim({
      scope: REPLAY_SCOPE,
      key: id,
      fingerprint: 'replay',
      token,
      nowMs,
      expiresAtMs: nowMs + deps.leaseMs,
    });
    if (!outcome.claimed) return null;
    return {
      complete: (done: DeadLetterReplay) =>
        deps.claims
          .complete(
            REPLAY_SCOPE,
            id,
            token,
            { status: 200, headers: {}, body: JSON.stringify(done) },
            Date.now() + deps.keepMs,
          )
          .catch((error: unknown) =>
            deps.logger.warn({ err: String(error), dead_letter_id: id }, 'could not record the claim of a replay'),
          ),
      release: () => deps.claims.release(REPLAY_SCOPE, id, token, Date.now()).catch(() => false),
    };
  }

  /** Re-drives one dead letter; returns the replay record written. */
  async function replayOne(letter: DeadLetterView, event: { key: string; payload: string }, by: string) {
    const record = (outcome: 'replayed' | 'skipped', detail: string): DeadLetterReplay => ({
      event_id: uuidv7(),
      occurred_at: isoNow(),
      dead_letter_id: letter.id,
      stage: letter.stage,
      document_id: letter.document_id ?? '',
      workspace_id: letter.workspace_id ?? '',
      version: letter.version ?? 0,
      outcome,
      detail,
      replayed_by: by,
    });
    const payload = parsePayload(event.payload);
    if (!payload) return record('skipped', 'The dead letter holds no readable event.');
    let restore: (() => Promise<unknown>) | null = null;
    if (letter.document_id !== null && letter.version !== null) {
      const documentId = letter.document_id;
      const version = letter.version;
      const current = await deps.documents.getVersion(documentId, version);
      if (!current) return record('skipped', 'The version no longer exists (deleted or purged).');
      if (current.status === 'completed') return record('skipped', 'The version completed meanwhile.');
      if (current.status === 'failed') {
        // Back to `processing` before the event is on its topic: the stage may finish it at once.
        await deps.documents.updateVersion(documentId, version, { status: 'processing', error: null });
        restore = () => deps.documents.updateVersion(documentId, version, { status: 'failed', error: current.error });
      }
    }
    try {
      // The event as it was, as a new message (a new id and time; the trace is kept).
      await deps.log.publish(stageInputTopic(topics, letter.stage), [
        { key: event.key, value: { ...payload, event_id: uuidv7(), occurred_at: isoNow() } },
      ]);
    } catch (error) {
      await restore?.().catch(() => undefined);
      if (error instanceof KbError && error.code === 'invalid-event') {
        return record('skipped', `The event no longer matches its topic's schema: ${error.message}`);
      }
      throw error;
    }
    return record('replayed', '');
  }

  return {
    async list(filter) {
      const { letters } = await readShared();
      return {
        dead_letters: letters.filter((l) => matches(l, filter)),
        counts: countsOf(letters, filter),
      };
    },

    replay(filter, replayedBy) {
      const run = async (): Promise<DeadLetterReplayView> => {
        const { letters, payloads } = await read();
        const handled: DeadLetterView[] = [];
        let replayed = 0;
        let skipped = 0;
        try {
          for (const letter of letters.filter((l) => matches(l, { ...filter, state: 'pending' }))) {
            const event = payloads.get(letter.id);
            if (!event) continue;
            const claim = await claimLetter(letter.id);
            if (claim === null) continue;
            const done = await replayOne(letter, event, replayedBy).catch(async (error: unknown) => {
              await claim.release();
              throw error;
            });
            await publishEvent(deps.log, topics.deadLetterReplays, letter.id, done);
            await claim.complete(done);
            if (done.outcome === 'replayed') replayed += 1;
            else skipped += 1;
            handled.push({
              ...letter,
              replay: { at: done.occurred_at, outcome: done.outcome, detail: done.detail, by: done.replayed_by },
            });
          }
        } finally {
          // What was replayed shows in the next counts.
          if (handled.length > 0) snapshot = null;
        }
        deps.logger.warn(
          { stage: filter.stage ?? null, workspace_id: filter.workspaceId ?? null, replayed, skipped, by: replayedBy },
          'dead letters replayed',
        );
        return { replayed, skipped, dead_letters: handled };
      };
      const result = replaying.then(run, run);
      replaying = result.catch(() => undefined);
      return result;
    },

    async counts(options = {}) {
      const { letters } = await recent(options.maxAgeMs ?? DEFAULT_MAX_AGE_MS);
      return countsOf(letters, options.workspaceId === undefined ? {} : { workspaceId: options.workspaceId });
    },

    peekCounts() {
      void recent(DEFAULT_MAX_AGE_MS).catch(() => undefined);
      return snapshot ? countsOf(snapshot.letters, {}) : null;
    },
  };
}

/** How long the readiness check waits for the first reading of the dead-letter topics. */
const FIRST_READING_WAIT_MS = 1_000;

/**
 * The readiness check of dead letters: never unhealthy (a dead letter is no outage), `degraded`
 * while some wait for a replay, so stuck documents never hide behind a healthy readiness. Answers
 * from the last counts (a reading of the topics may take seconds on Kafka), waiting up to a second
 * for the first one.
 */
export async function deadLetterReadiness(service: Pick<DeadLettersService, 'peekCounts' | 'counts'>): Promise<{
  degraded?: string;
  detail?: string;
}> {
  let counts = service.peekCounts();
  if (counts === null) {
    let timer: NodeJS.Timeout | undefined;
    counts = await Promise.race([
      service.counts().catch(() => null),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), FIRST_READING_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }
  if (counts === null) return { detail: 'dead letters not counted yet' };
  const waiting = counts.filter((c) => c.pending > 0);
  const pending = waiting.reduce((sum, c) => sum + c.pending, 0);
  if (pending === 0) {
    const total = counts.reduce((sum, c) => sum + c.total, 0);
    return { detail: total === 0 ? 'no dead letters' : `no dead letter waits for a replay (${total} replayed)` };
  }
  const perStage = waiting.map((c) => `${c.stage} ${c.pending}`).join(', ');
  return {
    degraded: `${pending} dead letter${pending === 1 ? '' : 's'} wait${pending === 1 ? 's' : ''} for a replay (${perStage}): see kb dlq list`,
  };
}
