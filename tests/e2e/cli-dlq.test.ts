import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGE_NAMES } from '../../core/events/events.ts';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import type { DeadLetterListView, DeadLetterReplayView } from '../../core/services/dead-letters.service.ts';
import { kbResult } from '../../support/child-service.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * `kb dlq list|replay` on the data directory of a running embedded service: the operator lists the
 * dead letters of every workspace, fixes the cause of one (its stored file went missing and is put
 * back), replays, and the document completes; a second replay replays nothing.
 */
let svc: TestService;
let env: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none', env: { KB_EMBEDDING_PROVIDER: 'local' } });
  env = { KB_DATA_DIR: svc.dataDir, KB_EMBEDDING_PROVIDER: 'local' };
});
afterAll(async () => {
  await svc?.close();
});

async function dlq<T>(args: string[]): Promise<T> {
  const result = await kbResult(['dlq', ...args, '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

// Each `kb dlq` is a process of its own opening the data directory: seconds each on a busy machine.
describe('kb dlq', { timeout: 600_000 }, () => {
  it('lists dead letters, replays the fixed one once, and it completes', async () => {
    const poison = await svc.upload('truncated.pdf', fixture('truncated.pdf'), { type: 'application/pdf' });
    const poisonId = (poison.body as DocumentView).document_id;
    const bytes = Buffer.from('# Put back\n\nAn operator restored this file from a backup.\n');
    const missing = await svc.upload('put-back.md', bytes);
    const missingId = (missing.body as DocumentView).document_id;
    const storageKey = (await svc.runtime.ports.documents.getVersion(missingId, 1))?.storageKey ?? '';
    await svc.runtime.ports.objects.delete(storageKey);
    await svc.runtime.startStages(STAGE_NAMES);
    await svc.waitForStatus(poisonId, 'failed');
    await svc.waitForStatus(missingId, 'failed');

    const listed = await dlq<DeadLetterListView>(['list']);
    expect(listed.dead_letters.map((l) => l.document_id).sort()).toEqual([poisonId, missingId].sort());
    expect(listed.dead_letters.every((l) => l.replay === null && l.workspace_id === svc.workspaceId)).toBe(true);
    expect(listed.counts.find((c) => c.stage === 'parse')).toMatchObject({ total: 2, pending: 2 });
    expect((await dlq<DeadLetterListView>(['list', '--workspace', 'nobody'])).dead_letters).toEqual([]);
    const text = await kbResult(['dlq', 'list', '--stage', 'parse'], env);
    expect(text.stdout).toContain(missingId);
    expect(text.stdout).toContain('not-found');
    expect(text.stdout).toContain('Dead letters: parse 2 pending of 2');

    // The cause of one is fixed: its file is back. Replay the parse stage of this workspace.
    await svc.runtime.ports.objects.put(storageKey, bytes);
    const replayed = await dlq<DeadLetterReplayView>(['replay', '--stage', 'parse', '--workspace', svc.workspaceId]);
    expect(replayed).toMatchObject({ replayed: 2, skipped: 0 });
    const completed = await svc.waitForStatus(missingId, 'completed');
    expect(completed.error).toBeNull();
    await svc.waitForStatus(poisonId, 'failed');

    // Each dead letter is replayed once: what is pending now is only the poison file's new failure.
    const pending = await dlq<DeadLetterListView>(['list', '--pending']);
    expect(pending.dead_letters.map((l) => l.document_id)).toEqual([poisonId]);
    const chunkOnly = await kbResult(['dlq', 'replay', '--stage', 'chunk'], env);
    expect(chunkOnly.stdout).toContain('No pending dead letters: nothing to replay.');
  });

  it('refuses an unknown stage with the usage', async () => {
    const result = await kbResult(['dlq', 'list', '--stage', 'parsing'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--stage must be one of parse, chunk, embed, index');
    expect(result.stderr).toContain('Usage: kb dlq');
  });
});
