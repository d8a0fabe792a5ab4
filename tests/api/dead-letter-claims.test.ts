/**
 * Dead-letter replays running at once in two processes (two services over the same log and the
 * same idempotency store, as two `kb dlq replay` would be): each dead letter is replayed once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetter, DeadLetterReplay } from '../../core/events/events.ts';
import { publishEvent } from '../../core/events/publish-event.ts';
import { silentLogger } from '../../core/model/logger.model.ts';
import type { IdempotencyStore } from '../../core/ports/idempotency-store/idempotency-store.port.ts';
import { createSqliteIdempotencyStore } from '../../core/ports/idempotency-store/sqlite.adapter.ts';
import { createDeadLettersService } from '../../core/services/dead-letters.service.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;
let dir: string;
const stores: IdempotencyStore[] = [];

beforeAll(async () => {
  svc = await startTestService({ stages: 'none' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'kb-dlq-claims-'));
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A dead-letters service as one process has it: its own connection to the shared claims file. */
function replayer() {
  const claims = createSqliteIdempotencyStore({ file: path.join(dir, 'idempotency.db') });
  stores.push(claims);
  const { ports, topics } = svc.runtime;
  return createDeadLettersService({
    log: ports.log,
    logAdmin: ports.logAdmin,
    documents: ports.documents,
    topics,
    logger: silentLogger,
    claims,
    leaseMs: 60_000,
    keepMs: 3_600_000,
  });
}

/** A dead letter of the parse stage for a version that does not exist (its replay is `skipped`). */
async function deadLetter(): Promise<string> {
  const documentId = randomUUID();
  const letter: DeadLetter = {
    event_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    stage: 'parse',
    source_topic: svc.runtime.topics.uploaded,
    source_partition: 0,
    source_offset: '0',
    key: documentId,
    payload: JSON.stringify({ document_id: documentId, workspace_id: svc.workspaceId, version: 1 }),
    error_code: 'engine-unavailable',
    error_message: 'OpenSearch was down',
    attempts: 5,
  };
  await publishEvent(svc.runtime.ports.log, svc.runtime.topics.deadLetter('parse'), documentId, letter);
  return letter.event_id;
}

describe('dead-letter replays in two processes at once', () => {
  it('handle each dead letter once between them', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await deadLetter());
    const [first, second] = [replayer(), replayer()];
    const [a, b] = await Promise.all([first.replay({}, 'operator-a'), second.replay({}, 'operator-b')]);
    const handled = [...a.dead_letters, ...b.dead_letters].map((letter) => letter.id);
    expect(handled.sort()).toEqual([...ids].sort());
    expect(a.skipped + b.skipped).toBe(ids.length);

    const records = await svc.runtime.ports.logAdmin.readRetained(svc.runtime.topics.deadLetterReplays);
    const replayed = records.map((m) => (m.value as unknown as DeadLetterReplay).dead_letter_id);
    expect(replayed.sort()).toEqual([...ids].sort());
    // Nothing is left pending, and a later replay finds nothing to do.
    const again = await replayer().replay({}, 'operator-c');
    expect(again.dead_letters).toEqual([]);
  });
});
