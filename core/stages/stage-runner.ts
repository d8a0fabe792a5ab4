import { v5 as uuidv5 } from 'uuid';
import type { Config } from '../config/config.ts';
import { type KbError, toKbError } from '../errors/kb-error.ts';
import { deliveredEvent } from '../events/delivered-event.ts';
import type { DeadLetter, DocumentFailed, EventBase, Topics } from '../events/events.ts';
import { notifyVersionSettled } from '../events/notify-version.ts';
import { publishEvent } from '../events/publish-event.ts';
import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { DeliveredMessage, MessageLog, Subscription } from '../ports/message-log/message-log.port.ts';
import { backoffDelay, isoNow, sleep } from '../util/time.ts';
import type { StageDefinition } from './stage.ts';

export interface StageRunnerDeps {
  readonly log: MessageLog;
  readonly documents: DocumentStore;
  readonly topics: Topics;
  /** `engineWaitMs` defaults to {@link DEFAULT_ENGINE_WAIT_MS}. */
  readonly retry: Omit<Config['retry'], 'engineWaitMs'> & { readonly engineWaitMs?: number };
  readonly logger: Logger;
}

/** How long one delivery waits in place for an engine by default (`KB_STAGE_ENGINE_WAIT_MS`). */
export const DEFAULT_ENGINE_WAIT_MS = 120_000;
/** Longest pause between two tries while an engine is unavailable: its return is noticed within this. */
const MAX_WAIT_STEP_MS = 5_000;

/** Namespace of the dead letters' ids (UUID v5 of the message they record). */
const DEAD_LETTER_NAMESPACE = '8f0c2f4e-5d1a-4b6e-9a57-1c3e0b9d7a21';

/**
 * The id of the dead letter of one delivered message at one stage: the same for every delivery of
 * that message, so a message dead-lettered again after a redelivery names the same dead letter
 * (readers count it once, a replay replays it once), and a replayed event, a new message, gets a
 * dead letter of its own if it fails again.
 */
export function deadLetterId(stage: string, message: Pick<DeliveredMessage, 'topic' | 'partition' | 'offset'>): string {
  return uuidv5(
    `${stage}\u0000${message.topic}\u0000${message.partition}\u0000${message.offset}`,
    DEAD_LETTER_NAMESPACE,
  );
}

/**
 * Whether the runner waits for `error` instead of counting it as a failed attempt: an engine that
 * cannot be used now (`engine-unavailable`, which every adapter's error mapping produces for
 * refused or reset connections, timeouts, 5xx/429 answers, red indexes, moving partition leaders
 * and the like) or storage that is full (`insufficient-storage`). Both heal by themselves.
 */
function waitsFor(error: KbError): boolean {
  return error.code === 'engine-unavailable' || error.code === 'insufficient-storage';
}

/**
 * Waits out unavailable engines within one delivery: each {@link EngineWaits.wait} sleeps a backoff
 * step (at most {@link MAX_WAIT_STEP_MS}), and once the delivery has waited `engineWaitMs` in all
 * it throws the error instead, which hands the message back to the log (delivered again after the
 * log's pause, to wait again): a handler never runs past the log's handler time limit.
 */
interface EngineWaits {
  wait(error: KbError, context: Record<string, unknown>, what: string): Promise<void>;
}

function engineWaits(deps: StageRunnerDeps, signal: AbortSignal): EngineWaits {
  const budget = deps.retry.engineWaitMs ?? DEFAULT_ENGINE_WAIT_MS;
  const step = Math.min(deps.retry.maxDelayMs, MAX_WAIT_STEP_MS);
  let waited = 0;
  let waits = 0;
  return {
    async wait(error, context, what) {
      waits += 1;
      const fields = { ...context, code: error.code, engine: error.engine ?? null, err: error.message };
      if (waited >= budget) {
        deps.logger.warn(
          { ...fields, waited_ms: waited },
          `${what}: still unavailable after waiting; the event goes back to the log and is delivered again`,
        );
        throw error;
      }
      if (waits === 1 || waits % 10 === 0) {
        deps.logger.warn(
          fields,
          error.code === 'insufficient-storage'
            ? `${what}: out of storage space; waiting (no attempt spent)`
            : `${what}: ${error.engine ?? 'an engine'} is unavailable; waiting for it (no attempt spent)`,
        );
      }
      const delay = Math.min(backoffDelay(waits, deps.retry.baseDelayMs, step, Math.random, 0.5), budget - waited);
      waited += delay;
      await sleep(Math.max(1, delay), signal);
    },
  };
}

/**
 * Runs a stage over the log. Per message:
 * - An unavailable engine or full storage (`engine-unavailable`, `insufficient-storage`) is waited
 *   for with backoff, spending no attempt; see `KB_STAGE_ENGINE_WAIT_MS` for how long one delivery
 *   waits before the message goes back to the log to be delivered again.
 * - Any other retriable error is retried up to `retry.maxAttempts` attempts with full-jitter
 *   exponential backoff.
 * - Then, or at once for a non-retriable error (a hostile file, a poison event), the failure is
 *   recorded: the version becomes `failed` with `error {code, message, stage, attempts, at}`, the
 *   event goes to the stage's dead-letter topic under an id derived from the message (the same for
 *   every delivery, see {@link deadLetterId}), and `kb.document.failed` and the
 *   `document.version.failed` notification are published. Each step waits for unavailable engines
 *   like a stage attempt; the message is committed only once every step is durable. When a step
 *   fails for good the handler rejects and the log delivers the message again.
 * A version that already completed is never marked failed by a replayed event (only the dead
 * letter records it).
 */
export async function runStage<E extends EventBase>(
  stage: StageDefinition<E>,
  deps: StageRunnerDeps,
): Promise<Subscription> {
  const stopping = new AbortController();
  const subscription = await deps.log.subscribe({
    groupId: deps.topics.group(stage.name),
    topics: [stage.inputTopic],
    fromBeginning: true,
    // Workspaces take turns: one workspace's backlog does not queue another's documents behind it.
    shareOf: (message) => String(message.value.workspace_id ?? ''),
    handler: (message) => handleMessage(stage, deps, message, stopping.signal),
  });
  return {
    async stop() {
      stopping.abort(new Error('stage stopping'));
      await subscription.stop();
    },
  };
}

async function handleMessage<E extends EventBase>(
  stage: StageDefinition<E>,
  deps: StageRunnerDeps,
  message: DeliveredMessage,
  signal: AbortSignal,
): Promise<void> {
  const event = deliveredEvent<E>(message);
  const { maxAttempts, baseDelayMs, maxDelayMs } = deps.retry;
  const waits = engineWaits(deps, signal);
  /** Attempts that failed for a reason of their own (not a wait for an engine). */
  let spent = 0;
  for (let call = 1; ; call++) {
    try {
      await stage.handle(event, call, signal);
      return;
    } catch (thrown) {
      const error = toKbError(thrown);
      const context = {
        stage: stage.name,
        document_id: event.document_id,
        version: event.version,
        attempt: spent + 1,
      };
      if (signal.aborted) throw error; // shutting down: leave the message uncommitted
      if (waitsFor(error)) {
        await waits.wait(error, context, `stage ${stage.name}`);
        continue;
      }
      spent += 1;
      if (error.retriable && spent < maxAttempts) {
        deps.logger.warn({ ...context, code: error.code, err: error.message }, 'stage attempt failed; retrying');
        await sleep(backoffDelay(spent, baseDelayMs, maxDelayMs), signal);
        continue;
      }
      deps.logger.error(
        { ...context, code: error.code, err: error.message },
        'stage failed; marking the version failed and sending the event to the dead-letter topic',
      );
      await recordFailure(stage, deps, message, error, spent, waits, signal);
      return;
    }
  }
}

/** Runs one step of recording a failure, waiting for unavailable engines like a stage attempt. */
async function durably<T>(
  step: () => Promise<T>,
  waits: EngineWaits,
  context: Record<string, unknown>,
  what: string,
  signal: AbortSignal,
): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (thrown) {
      const error = toKbError(thrown);
      if (signal.aborted || !waitsFor(error)) throw error;
      await waits.wait(error, context, what);
    }
  }
}

async function recordFailure<E extends EventBase>(
  stage: StageDefinition<E>,
  deps: StageRunnerDeps,
  message: DeliveredMessage,
  error: KbError,
  attempts: number,
  waits: EngineWaits,
  signal: AbortSignal,
): Promise<void> {
  const event = message.value;
  const at = isoNow();
  const documentId = String(event.document_id ?? '');
  const version = Number(event.version ?? 0);
  const code = error.code;
  const safeMessage = error.message.slice(0, 2000);
  const letterId = deadLetterId(stage.name, message);
  const context = { stage: stage.name, document_id: documentId, version, code, dead_letter: letterId };
  const step = <T>(what: string, run: () => Promise<T>) => durably(run, waits, context, what, signal);

  // 1. The version first: once it says `failed`, the failure is visible whatever happens next
  // (a crash before the dead letter is written redelivers the message, which fails again).
  let marked: { workspaceId: string } | null = null;
  if (documentId && Number.isInteger(version) && version >= 1) {
    const current = await step('read the failed version', () => deps.documents.getVersion(documentId, version));
    if (current?.status === 'completed') {
      // A replayed or duplicated event of a version that already completed: the version stays as
      // it is served (delivery is at-least-once, and a replay must change nothing); the dead
      // letter keeps the failure for operators.
      deps.logger.warn(context, 'a replayed event failed; the completed version is left as it is');
    } else if (current) {
      const updated = await step('mark the version failed', () =>
        deps.documents.updateVersion(documentId, version, {
          status: 'failed',
          error: { code, message: safeMessage, stage: stage.name, attempts, at },
        }),
      );
      if (updated) marked = { workspaceId: updated.workspaceId };
    }
  }

  // 2. The dead letter, whatever became of the version (purged meanwhile, or completed).
  const deadLetter: DeadLetter = {
    event_id: letterId,
    occurred_at: at,
    stage: stage.name,
    source_topic: message.topic,
    source_partition: message.partition,
    source_offset: message.offset,
    key: message.key,
    payload: JSON.stringify(event),
    error_code: code,
    error_message: safeMessage,
    attempts,
  };
  await step('write the dead letter', () =>
    publishEvent(deps.log, deps.topics.deadLetter(stage.name), message.key, deadLetter),
  );
  if (!marked) return;

  // 3. Tell consumers and clients. The event's id derives from the dead letter's, so a delivery
  // that records the same failure again publishes the same event (consumers can drop the copy).
  const workspaceId = marked.workspaceId;
  const failed: DocumentFailed = {
    event_id: uuidv5(`${letterId}\u0000failed`, DEAD_LETTER_NAMESPACE),
    occurred_at: at,
    trace_id: String(event.trace_id ?? ''),
    document_id: documentId,
    workspace_id: workspaceId,
    version,
    stage: stage.name,
    error_code: code,
    error_message: safeMessage,
    attempts,
  };
  await step('publish kb.document.failed', () => publishEvent(deps.log, deps.topics.failed, documentId, failed));
  await step('notify the failed version', () =>
    notifyVersionSettled(
      { log: deps.log, documents: deps.documents, topic: deps.topics.notification },
      { workspaceId, documentId, version },
      'failed',
    ),
  );
}
