import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KbError } from '../../../core/errors/kb-error.ts';
import {
  type DeadLetter,
  type DocumentFailed,
  type DocumentUploaded,
  type Topics,
  topicNames,
  topicSpecs,
} from '../../../core/events/events.ts';
import { type Logger, silentLogger } from '../../../core/model/logger.model.ts';
import type { DocumentStore } from '../../../core/ports/document-store/document-store.port.ts';
import { createSqliteDocumentStore } from '../../../core/ports/document-store/sqlite.adapter.ts';
import type { DeliveredMessage, Subscription } from '../../../core/ports/message-log/message-log.port.ts';
import { createSqliteMessageLog, type SqliteMessageLog } from '../../../core/ports/message-log/sqlite.adapter.ts';
import type { StageDefinition } from '../../../core/stages/stage.ts';
import { runStage } from '../../../core/stages/stage-runner.ts';
import { backoffDelay } from '../../../core/util/time.ts';

/**
 * The stage runner over the real embedded log and document store: retries with backoff, the
 * dead-letter topic, the failed version and the `kb.document.failed` event.
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Harness {
  readonly log: SqliteMessageLog;
  readonly documents: DocumentStore;
  readonly topics: Topics;
  readonly workspaceId: string;
  /** Creates a document (version 1, pending) and publishes its `uploaded` event; returns the event. */
  upload(name: string): Promise<DocumentUploaded>;
  /** Runs `stage` with the given attempt limit and tiny backoff delays. */
  run(
    stage: StageDefinition,
    maxAttempts: number,
    options?: { baseDelayMs?: number; logger?: Logger; engineWaitMs?: number; documents?: DocumentStore },
  ): Promise<Subscription>;
  /** Every message on `topic` so far and from now on, read by a fresh consumer group. */
  read(topic: string): Promise<DeliveredMessage[]>;
}

let dir: string;
let harness: Harness;
const subscriptions: Subscription[] = [];
/** Handler rejections the log reported (a stage rejects only when it cannot record an outcome). */
const logErrors: string[] = [];

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-stage-runner-'));
  logErrors.length = 0;
  const log = createSqliteMessageLog({
    file: path.join(dir, 'log.db'),
    pollIntervalMs: 10,
    retryDelayMs: 50,
    onError: (error) => logErrors.push(error instanceof Error ? error.message : String(error)),
  });
  const documents = createSqliteDocumentStore({ file: path.join(dir, 'documents.db') });
  const prefix = `t${randomBytes(4).toString('hex')}.`;
  const topics = topicNames(prefix);
  // One partition: events are handled strictly in publish order, so a later event's outcome
  // proves that every earlier event's outcome is already recorded.
  await log.ensureTopics(topicSpecs(prefix, 1));
  const workspaceId = `ws-${randomBytes(4).toString('hex')}`;

  harness = {
    log,
    documents,
    topics,
    workspaceId,
    async upload(name) {
      const id = uuidv7();
      const at = new Date().toISOString();
      await documents.createDocument({
        id,
        workspaceId,
        source: 'upload',
        firstVersion: {
          name,
          mimeType: 'text/plain',
          sizeBytes: 5,
          contentHash: 'a'.repeat(64),
          storageKey: `files/${id}`,
          metadata: {},
          changeReason: null,
          restoredFrom: null,
          createdBy: 'key-1',
          createdAt: at,
        },
      });
      const event: DocumentUploaded = {
        event_id: uuidv7(),
        occurred_at: at,
        trace_id: uuidv7(),
        document_id: id,
        workspace_id: workspaceId,
        version: 1,
        storage_key: `files/${id}`,
        mime_type: 'text/plain',
        size_bytes: 5,
        content_hash: 'a'.repeat(64),
        name,
      };
      await log.publish(topics.uploaded, [{ key: id, value: event as unknown as Record<string, unknown> }]);
      return event;
    },
    async run(stage, maxAttempts, options = {}) {
      const subscription = await runStage(stage, {
        log,
        documents: options.documents ?? documents,
        topics,
        retry: {
          maxAttempts,
          baseDelayMs: options.baseDelayMs ?? 2,
          maxDelayMs: 20,
          ...(options.engineWaitMs === undefined ? {} : { engineWaitMs: options.engineWaitMs }),
        },
        logger: options.logger ?? silentLogger,
      });
      subscriptions.push(subscription);
      return subscription;
    },
    async read(topic) {
      const messages: DeliveredMessage[] = [];
      subscriptions.push(
        await log.subscribe({
          groupId: `reader-${randomBytes(4).toString('hex')}`,
          topics: [topic],
          fromBeginning: true,
          handler: async (message) => {
            messages.push(message);
          },
        }),
      );
      return messages;
    },
  };
});

afterEach(async () => {
  for (const s of subscriptions.splice(0).reverse()) await s.stop();
  await harness.log.close();
  await harness.documents.close();
  await rm(dir, { recursive: true, force: true });
});

/** A parse stage whose outcome per document is decided by `behaviour`; records every call. */
function scriptedStage(
  behaviour: (event: DocumentUploaded, attempt: number) => Promise<void> | void,
): StageDefinition<DocumentUploaded> & { calls: Array<{ document: string; attempt: number }> } {
  const calls: Array<{ document: string; attempt: number }> = [];
  return {
    name: 'parse',
    inputTopic: harness.topics.uploaded,
    calls,
    async handle(event, attempt) {
      calls.push({ document: event.name, attempt });
      await behaviour(event, attempt);
    },
  };
}

const deadLetters = (messages: DeliveredMessage[]) => messages.map((m) => m.value as unknown as DeadLetter);

describe('stage runner: retries', () => {
  it('succeeds on the third attempt after two retriable errors, with nothing dead-lettered', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const stage = scriptedStage(async (event, attempt) => {
      if (event.name === 'flaky.txt' && attempt < 3) {
        throw new KbError('engine-unavailable', `the engine is down (attempt ${attempt})`);
      }
      if (event.name === 'flaky.txt') {
        await harness.documents.updateVersion(event.document_id, event.version, { status: 'processing' });
        return;
      }
      throw new KbError('corrupt-file', 'the marker file is corrupt');
    });
    const flaky = await harness.upload('flaky.txt');
    // Published after the flaky event on the same single partition: once its dead letter is
    // there, the flaky event's outcome is final.
    const marker = await harness.upload('marker.txt');
    await harness.run(stage, 5);

    await waitFor('the marker in the DLQ', () => (dlq.length > 0 ? true : undefined));
    expect(deadLetters(dlq).map((d) => JSON.parse(d.payload).document_id)).toEqual([marker.document_id]);
    expect(stage.calls.filter((c) => c.document === 'flaky.txt').map((c) => c.attempt)).toEqual([1, 2, 3]);
    const version = await harness.documents.getVersion(flaky.document_id, 1);
    expect(version?.status).toBe('processing');
    expect(version?.error).toBeNull();
  });

  it('dead-letters an event still failing after maxAttempts, fails the version and publishes kb.document.failed', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    const stage = scriptedStage((_, attempt) => {
      throw new KbError('timeout', `the engine did not answer (attempt ${attempt})`);
    });
    const event = await harness.upload('always-down.txt');
    await harness.run(stage, 4);

    const [failed] = await waitFor('kb.document.failed', () => (failedEvents.length > 0 ? failedEvents : undefined));
    expect(stage.calls.map((c) => c.attempt)).toEqual([1, 2, 3, 4]);

    expect(dlq).toHaveLength(1);
    const letter = deadLetters(dlq)[0] as DeadLetter;
    expect(letter).toMatchObject({
      stage: 'parse',
      source_topic: harness.topics.uploaded,
      source_partition: 0,
      source_offset: '0',
      key: event.document_id,
      error_code: 'timeout',
      error_message: 'the engine did not answer (attempt 4)',
      attempts: 4,
    });
    expect(JSON.parse(letter.payload)).toEqual(event);
    expect(dlq[0]?.key).toBe(event.document_id);

    const version = await harness.documents.getVersion(event.document_id, 1);
    expect(version?.status).toBe('failed');
    expect(version?.error).toEqual({
      code: 'timeout',
      message: 'the engine did not answer (attempt 4)',
      stage: 'parse',
      attempts: 4,
      at: expect.stringMatching(ISO),
    });

    expect(failed?.key).toBe(event.document_id);
    expect(failed?.value as unknown as DocumentFailed).toMatchObject({
      trace_id: event.trace_id,
      document_id: event.document_id,
      workspace_id: harness.workspaceId,
      version: 1,
      stage: 'parse',
      error_code: 'timeout',
      error_message: 'the engine did not answer (attempt 4)',
      attempts: 4,
    });
    // The outcome was recorded, so the handler never rejected to the log.
    expect(logErrors).toEqual([]);
    // The source event is committed: a restarted stage does not see it again.
    await waitFor('the commit', async () =>
      (await harness.log.lag(harness.topics.group('parse'), harness.topics.uploaded)) === 0 ? true : undefined,
    );
  });

  it('waits for an engine that refuses connections without spending attempts, then completes', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    const stage = scriptedStage(async (e, attempt) => {
      // Far more refusals than the 3 attempts the stage has for errors of its own.
      if (attempt <= 12) {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9200'), { code: 'ECONNREFUSED' });
      }
      await harness.documents.updateVersion(e.document_id, e.version, { status: 'processing' });
    });
    const event = await harness.upload('refused.txt');
    await harness.run(stage, 3);
    await waitFor('the stage to get through', async () =>
      (await harness.documents.getVersion(event.document_id, 1))?.status === 'processing' ? true : undefined,
    );
    expect(stage.calls.map((c) => c.attempt)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    await waitFor('the commit', async () =>
      (await harness.log.lag(harness.topics.group('parse'), harness.topics.uploaded)) === 0 ? true : undefined,
    );
    expect(dlq).toHaveLength(0);
    expect(failedEvents).toHaveLength(0);
    expect((await harness.documents.getVersion(event.document_id, 1))?.error).toBeNull();
  });

  it('spends no attempt on engine-unavailable between attempts that fail for reasons of their own', async () => {
    const failedEvents = await harness.read(harness.topics.failed);
    // conflict, engine down ×5, conflict, engine down ×5, conflict: 3 attempts spent, then the dead letter.
    const stage = scriptedStage((_, attempt) => {
      if (attempt % 6 === 1) throw new KbError('conflict', `busy record (call ${attempt})`);
      throw new KbError('engine-unavailable', 'OpenSearch is unavailable', { engine: 'OpenSearch' });
    });
    const event = await harness.upload('mixed.txt');
    await harness.run(stage, 3);
    await waitFor('kb.document.failed', () => (failedEvents.length > 0 ? true : undefined));
    expect(stage.calls).toHaveLength(13);
    expect((await harness.documents.getVersion(event.document_id, 1))?.error).toMatchObject({
      code: 'conflict',
      message: 'busy record (call 13)',
      attempts: 3,
    });
  });

  it('hands an event back to the log after waiting KB_STAGE_ENGINE_WAIT_MS, and the next delivery completes it', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    let engineBackAt = Number.POSITIVE_INFINITY;
    const stage = scriptedStage(async (e) => {
      if (Date.now() < engineBackAt) {
        throw new KbError('engine-unavailable', 'Kafka is unavailable', { engine: 'Kafka' });
      }
      await harness.documents.updateVersion(e.document_id, e.version, { status: 'processing' });
    });
    const event = await harness.upload('long-outage.txt');
    await harness.run(stage, 2, { engineWaitMs: 100 });
    // The first delivery gives up waiting and rejects: the log reports it and delivers again.
    await waitFor('the message handed back to the log', () =>
      logErrors.some((e) => e.includes('Kafka is unavailable')) ? true : undefined,
    );
    engineBackAt = Date.now();
    await waitFor('the stage to get through', async () =>
      (await harness.documents.getVersion(event.document_id, 1))?.status === 'processing' ? true : undefined,
    );
    expect(dlq).toHaveLength(0);
    expect((await harness.documents.getVersion(event.document_id, 1))?.error).toBeNull();
  });
});

/** The document store, except that `method` fails with `engine-unavailable` while `down()` says so. */
function storeDownFor(store: DocumentStore, method: keyof DocumentStore, down: () => boolean): DocumentStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== method || typeof value !== 'function') {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        if (down()) throw new KbError('engine-unavailable', 'OpenSearch is unavailable', { engine: 'OpenSearch' });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('stage runner: recording a failure', () => {
  it('waits for the store to mark the version failed, then dead-letters the event once', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    let refusals = 0;
    const documents = storeDownFor(harness.documents, 'updateVersion', () => ++refusals <= 15);
    const stage = scriptedStage(() => {
      throw new KbError('corrupt-file', 'the file is corrupt');
    });
    const event = await harness.upload('poison.txt');
    const marker = await harness.upload('marker.txt');
    await harness.run(stage, 3, { documents });
    await waitFor('both failures recorded', () => (failedEvents.length === 2 ? true : undefined));

    expect(refusals).toBeGreaterThan(15);
    const version = await harness.documents.getVersion(event.document_id, 1);
    expect(version?.status).toBe('failed');
    expect(version?.error).toMatchObject({ code: 'corrupt-file', stage: 'parse', attempts: 1 });
    // Waiting took no extra delivery: the poison event was handled once, dead-lettered once.
    expect(stage.calls.filter((c) => c.document === 'poison.txt')).toHaveLength(1);
    expect(deadLetters(dlq).map((d) => JSON.parse(d.payload).document_id)).toEqual([
      event.document_id,
      marker.document_id,
    ]);
    expect(logErrors).toEqual([]);
  });

  it('gives every delivery of one message the same dead-letter id, and a new message a new one', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    // The notification of the first failure cannot be published (a refusal that is not an engine
    // outage): the handler rejects, the log delivers the message again, it fails and is recorded again.
    let notificationsRefused = 1;
    const log = harness.log;
    const flakyLog = new Proxy(log, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === 'publish') {
          return async (topic: string, messages: never[]) => {
            if (topic === harness.topics.notification && notificationsRefused-- > 0) {
              throw new KbError('internal-error', 'the notification was refused');
            }
            return log.publish(topic, messages);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const stage = scriptedStage(() => {
      throw new KbError('corrupt-file', 'the file is corrupt');
    });
    const event = await harness.upload('poison.txt');
    subscriptions.push(
      await runStage(stage, {
        log: flakyLog,
        documents: harness.documents,
        topics: harness.topics,
        retry: { maxAttempts: 2, baseDelayMs: 2, maxDelayMs: 20 },
        logger: silentLogger,
      }),
    );
    await waitFor('two dead letters', () => (dlq.length === 2 ? true : undefined));
    const [first, second] = deadLetters(dlq);
    expect(first?.event_id).toBe(second?.event_id);
    expect(first?.source_offset).toBe('0');
    expect(logErrors).toEqual(['the notification was refused']);

    // The same event published again is another message: its dead letter is another one.
    await harness.log.publish(harness.topics.uploaded, [
      { key: event.document_id, value: event as unknown as Record<string, unknown> },
    ]);
    await waitFor('the third dead letter', () => (dlq.length === 3 ? true : undefined));
    expect(deadLetters(dlq)[2]?.event_id).not.toBe(first?.event_id);
    expect((await harness.documents.getVersion(event.document_id, 1))?.status).toBe('failed');
  });
});

describe('stage runner: non-retriable errors', () => {
  it('dead-letters a corrupt file at once, after one attempt', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    const stage = scriptedStage(() => {
      throw new KbError('encrypted-file', 'The PDF needs a password.');
    });
    const event = await harness.upload('locked.pdf');
    await harness.run(stage, 5);

    await waitFor('kb.document.failed', () => (failedEvents.length > 0 ? true : undefined));
    expect(stage.calls).toEqual([{ document: 'locked.pdf', attempt: 1 }]);
    expect(deadLetters(dlq)).toEqual([
      expect.objectContaining({ error_code: 'encrypted-file', attempts: 1, stage: 'parse' }),
    ]);
    expect((await harness.documents.getVersion(event.document_id, 1))?.error).toEqual({
      code: 'encrypted-file',
      message: 'The PDF needs a password.',
      stage: 'parse',
      attempts: 1,
      at: expect.stringMatching(ISO),
    });
    expect(failedEvents.map((m) => (m.value as unknown as DocumentFailed).attempts)).toEqual([1]);
  });

  it('records an unexpected exception as internal-error without retrying it', async () => {
    const failedEvents = await harness.read(harness.topics.failed);
    const stage = scriptedStage(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'pages')");
    });
    const event = await harness.upload('bug.txt');
    await harness.run(stage, 5);
    await waitFor('kb.document.failed', () => (failedEvents.length > 0 ? true : undefined));
    expect(stage.calls).toHaveLength(1);
    expect((await harness.documents.getVersion(event.document_id, 1))?.error).toMatchObject({
      code: 'internal-error',
      stage: 'parse',
      attempts: 1,
    });
  });

  it('dead-letters the event of a purged document without failing anything', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    const event = await harness.upload('gone.txt');
    await harness.documents.purge(harness.workspaceId, event.document_id);
    const marker = await harness.upload('marker.txt');
    const stage = scriptedStage(() => {
      throw new KbError('corrupt-file', 'unreadable');
    });
    await harness.run(stage, 2);
    await waitFor('both dead letters', () => (dlq.length === 2 ? true : undefined));
    await waitFor('kb.document.failed of the marker', () => (failedEvents.length > 0 ? true : undefined));
    expect(failedEvents.map((m) => (m.value as unknown as DocumentFailed).document_id)).toEqual([marker.document_id]);
  });
});

describe('stage runner: replays', () => {
  it('never marks a completed version failed when a replay of its event fails', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const failedEvents = await harness.read(harness.topics.failed);
    const served = await harness.upload('served.txt');
    await harness.documents.completeVersion(served.document_id, 1, {
      at: new Date().toISOString(),
      chunkCount: 1,
      tokens: 3,
      embeddingModel: null,
    });
    const marker = await harness.upload('marker.txt');
    const stage = scriptedStage(() => {
      throw new KbError('parse-timeout', 'Parsing took longer than 500 ms and was stopped.');
    });
    await harness.run(stage, 3);

    await waitFor('kb.document.failed of the marker', () => (failedEvents.length > 0 ? true : undefined));
    expect(deadLetters(dlq).map((d) => JSON.parse(d.payload).document_id)).toEqual([
      served.document_id,
      marker.document_id,
    ]);
    expect(failedEvents.map((m) => (m.value as unknown as DocumentFailed).document_id)).toEqual([marker.document_id]);
    const version = await harness.documents.getVersion(served.document_id, 1);
    expect(version?.status).toBe('completed');
    expect(version?.error).toBeNull();
    expect((await harness.documents.getDocument(harness.workspaceId, served.document_id))?.servedVersion).toBe(1);
  });
});

describe('stage runner: shutdown', () => {
  it('leaves an event that is waiting for its next attempt uncommitted, for the next worker', async () => {
    const dlq = await harness.read(harness.topics.deadLetter('parse'));
    const first = scriptedStage(() => {
      throw new KbError('engine-unavailable', 'down');
    });
    const event = await harness.upload('interrupted.txt');
    // A long backoff: the stop lands while the runner sleeps before attempt 2.
    const subscription = await harness.run(first, 5, { baseDelayMs: 60_000 });
    await waitFor('the first attempt', () => (first.calls.length > 0 ? true : undefined));
    await subscription.stop();
    subscriptions.splice(subscriptions.indexOf(subscription), 1);

    expect(await harness.log.lag(harness.topics.group('parse'), harness.topics.uploaded)).not.toBe(0);
    expect(logErrors).toEqual(['stage stopping']);
    expect((await harness.documents.getVersion(event.document_id, 1))?.status).toBe('pending');

    const second = scriptedStage(async (e) => {
      await harness.documents.updateVersion(e.document_id, e.version, { status: 'processing' });
    });
    await harness.run(second, 5);
    await waitFor('the next worker', async () =>
      (await harness.documents.getVersion(event.document_id, 1))?.status === 'processing' ? true : undefined,
    );
    expect(second.calls).toEqual([{ document: 'interrupted.txt', attempt: 1 }]);
    expect(first.calls).toHaveLength(1);
    expect(dlq).toHaveLength(0);
  });
});

describe('backoffDelay', () => {
  it('draws each delay uniformly below a ceiling that doubles per attempt up to the maximum', () => {
    const top = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffDelay(a, 100, 5_000, top))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
    expect([1, 2, 3, 4].map((a) => backoffDelay(a, 100, 5_000, () => 0.5))).toEqual([50, 100, 200, 400]);
    expect([1, 5, 9].map((a) => backoffDelay(a, 100, 5_000, () => 0))).toEqual([0, 0, 0]);
  });

  it('spreads delays over the whole window with the default random source', () => {
    const samples = Array.from({ length: 200 }, () => backoffDelay(4, 100, 5_000));
    expect(samples.every((d) => Number.isInteger(d) && d >= 0 && d <= 800)).toBe(true);
    expect(new Set(samples).size).toBeGreaterThan(50);
    expect(Math.min(...samples)).toBeLessThan(200);
    expect(Math.max(...samples)).toBeGreaterThan(600);
  });

  it('grows with the attempt number: later attempts wait longer for the same draw', () => {
    const draws = [0.1, 0.37, 0.62, 0.9];
    for (const r of draws) {
      const delays = [1, 2, 3, 4, 5].map((a) => backoffDelay(a, 200, 30_000, () => r));
      for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1] as number);
    }
  });
});
