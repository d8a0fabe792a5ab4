import { v7 as uuidv7 } from 'uuid';
import type { Config } from '../config/config.ts';
import { toKbError } from '../errors/kb-error.ts';
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
  readonly retry: Config['retry'];
  readonly logger: Logger;
}

/**
 * Runs a stage over the log. Per message: up to `retry.maxAttempts` attempts with full-jitter
 * exponential backoff while the error is retriable (without limit for `insufficient-storage`: a full
 * disk heals when space is freed, so it never fails a version); then, or at once for a non-retriable error,
 * the event goes to the stage's dead-letter topic, the version becomes `failed` with
 * `error {code, message, stage, attempts, at}`, and `kb.document.failed` and the
 * `document.version.failed` notification are published.
 * A version that already completed is never marked failed by a replayed event (only the dead
 * letter records it). The message is committed only after one of those outcomes is durable; if
 * even recording the failure fails, the handler rejects and the log redelivers the message later.
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
  for (let attempt = 1; ; attempt++) {
    try {
      await stage.handle(event, attempt, signal);
      return;
    } catch (thrown) {
      const error = toKbError(thrown);
      const context = {
        stage: stage.name,
        document_id: event.document_id,
        version: event.version,
        attempt,
        code: error.code,
        err: error.message,
      };
      if (signal.aborted) throw error; // shutting down: leave the message uncommitted
      if (error.code === 'insufficient-storage') {
        // Never a permanent failure: the event waits (backing off up to the longest retry delay)
        // until space is freed, without counting against its attempts.
        if (attempt === 1 || attempt % 10 === 0) deps.logger.warn(context, 'out of storage space; waiting to retry');
        await sleep(backoffDelay(attempt, baseDelayMs, maxDelayMs, Math.random, 0.5), signal);
        continue;
      }
      if (error.retriable && attempt < maxAttempts) {
        deps.logger.warn(context, 'stage attempt failed; retrying');
        await sleep(backoffDelay(attempt, baseDelayMs, maxDelayMs), signal);
        continue;
      }
      deps.logger.error(context, 'stage failed; sending the event to the dead-letter topic');
      await recordFailure(stage, deps, message, error.code, error.message, attempt);
      return;
    }
  }
}

async function recordFailure<E extends EventBase>(
  stage: StageDefinition<E>,
  deps: StageRunnerDeps,
  message: DeliveredMessage,
  code: string,
  detail: string,
  attempts: number,
): Promise<void> {
  const event = message.value;
  const at = isoNow();
  const documentId = String(event.document_id ?? '');
  const version = Number(event.version ?? 0);
  const safeMessage = detail.slice(0, 2000);
  const deadLetter: DeadLetter = {
    event_id: uuidv7(),
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
  await publishEvent(deps.log, deps.topics.deadLetter(stage.name), message.key, deadLetter);
  if (!documentId || !Number.isInteger(version) || version < 1) return;
  const current = await deps.documents.getVersion(documentId, version);
  if (!current) return; // purged meanwhile
  if (current.status === 'completed') {
    // A replayed or duplicated event of a version that already completed: the version stays as it
    // is served (delivery is at-least-once, and a replay must change nothing); the dead letter
    // keeps the failure for operators.
    deps.logger.warn(
      { stage: stage.name, document_id: documentId, version, code },
      'a replayed event failed; the completed version is left as it is',
    );
    return;
  }
  const updated = await deps.documents.updateVersion(documentId, version, {
    status: 'failed',
    error: { code, message: safeMessage, stage: stage.name, attempts, at },
  });
  if (!updated) return; // purged meanwhile
  const failed: DocumentFailed = {
    event_id: uuidv7(),
    occurred_at: at,
    trace_id: String(event.trace_id ?? ''),
    document_id: documentId,
    workspace_id: updated.workspaceId,
    version,
    stage: stage.name,
    error_code: code,
    error_message: safeMessage,
    attempts,
  };
  await publishEvent(deps.log, deps.topics.failed, documentId, failed);
  await notifyVersionSettled(
    { log: deps.log, documents: deps.documents, topic: deps.topics.notification },
    { workspaceId: updated.workspaceId, documentId, version },
    'failed',
  );
}
