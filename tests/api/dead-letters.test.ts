import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocumentFailed, STAGE_NAMES } from '../../core/events/events.ts';
import type { DocumentView, ReadinessView } from '../../core/model/response-views.model.ts';
import type { DeadLetterListView, DeadLetterReplayView } from '../../core/services/dead-letters.service.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Dead letters on the embedded runtime, through the API: a file that can never be parsed fails
 * visibly and is dead-lettered once; a failure whose cause an operator fixes (the stored upload
 * went missing and is put back) is replayed once and completes.
 */
const TOKEN = 'dead-letter-scrape-token';
let service: TestService;

beforeAll(async () => {
  // Stages start later, once the test has taken an upload's stored file away.
  service = await startTestService({
    stages: 'none',
    env: { KB_EMBEDDING_PROVIDER: 'local', KB_METRICS_TOKEN: TOKEN },
  });
});
afterAll(async () => {
  await service?.close();
});

const list = async (query = '') => {
  const res = await service.request<DeadLetterListView>('GET', `/api/v1/admin/dead-letters${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};

describe('dead letters through the API', () => {
  let poisonId: string;
  let missingId: string;
  let missingBytes: Buffer;
  let missingKey: string;

  it('marks a poison upload failed with its code, publishes kb.document.failed and dead-letters it once', async () => {
    const poison = await service.upload('truncated.pdf', fixture('truncated.pdf'), { type: 'application/pdf' });
    expect(poison.status).toBe(201);
    poisonId = (poison.body as DocumentView).document_id;
    missingBytes = Buffer.from('# Restored\n\nThis file went missing from storage and was put back.\n');
    const missing = await service.upload('restored.md', missingBytes);
    expect(missing.status).toBe(201);
    missingId = (missing.body as DocumentView).document_id;
    const version = await service.runtime.ports.documents.getVersion(missingId, 1);
    missingKey = version?.storageKey ?? '';
    await service.runtime.ports.objects.delete(missingKey);
    await service.runtime.startStages(STAGE_NAMES);

    const failed = await service.waitForStatus(poisonId, 'failed');
    expect(failed.error).toMatchObject({ stage: 'parse', attempts: 1 });
    expect(failed.error?.code).not.toBe('engine-unavailable');
    const gone = await service.waitForStatus(missingId, 'failed');
    expect(gone.error).toMatchObject({ code: 'not-found', stage: 'parse' });

    const events = await service.runtime.ports.logAdmin.readRetained(service.runtime.topics.failed);
    const failures = events.map((m) => m.value as unknown as DocumentFailed);
    expect(failures.filter((f) => f.document_id === poisonId)).toHaveLength(1);
    expect(failures.find((f) => f.document_id === poisonId)?.error_code).toBe(failed.error?.code);

    const { dead_letters: letters, counts } = await list();
    expect(letters.map((l) => l.document_id).sort()).toEqual([poisonId, missingId].sort());
    const poisonLetter = letters.find((l) => l.document_id === poisonId);
    expect(poisonLetter).toMatchObject({
      stage: 'parse',
      workspace_id: service.workspaceId,
      version: 1,
      error_code: failed.error?.code,
      copies: 1,
      replay: null,
    });
    expect(counts.find((c) => c.stage === 'parse')).toEqual({ stage: 'parse', total: 2, pending: 2 });
    expect((await list('?stage=index')).dead_letters).toEqual([]);
  });

  it('shows pending dead letters in readiness (degraded, still 200) and in /metrics', async () => {
    await service.request('GET', '/health/ready', { key: null });
    let ready: ReadinessView | undefined;
    for (let i = 0; i < 50 && ready?.checks.dead_letters?.status !== 'degraded'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await service.request<ReadinessView>('GET', '/health/ready', { key: null });
      expect(res.status).toBe(200);
      ready = res.body;
    }
    expect(ready?.checks.dead_letters).toMatchObject({ status: 'degraded' });
    expect(ready?.checks.dead_letters?.message).toContain('2 dead letters wait for a replay (parse 2)');

    const scraped = await service.request('GET', '/metrics', {
      key: null,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const samples = parsePrometheusText(scraped.text);
    expect(sampleValue(samples, 'kb_dead_letters', { stage: 'parse', state: 'pending' })).toBe(2);
    expect(sampleValue(samples, 'kb_dead_letters', { stage: 'index', state: 'pending' })).toBe(0);
  });

  it('refuses keys without write permission and keys of other workspaces see none', async () => {
    const readOnly = await service.request('GET', '/api/v1/admin/dead-letters', { key: service.keys.read });
    expect(readOnly.status).toBe(403);
    const other = await service.request<DeadLetterListView>('GET', '/api/v1/admin/dead-letters', {
      key: service.keys.otherWorkspace,
    });
    expect(other.status).toBe(200);
    expect(other.body.dead_letters).toEqual([]);
    const bad = await service.request('GET', '/api/v1/admin/dead-letters?stage=nope');
    expect(bad.status).toBe(400);
  });

  it('replays each pending dead letter once: the fixed one completes, the poison one fails again', async () => {
    // The cause is fixed: the stored file is back.
    await service.runtime.ports.objects.put(missingKey, missingBytes);
    const res = await service.request<DeadLetterReplayView>('POST', '/api/v1/admin/dead-letters/replay', {
      json: { stage: 'parse' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.replayed).toBe(2);
    expect(res.body.dead_letters.every((l) => l.replay?.outcome === 'replayed')).toBe(true);

    const restored = await service.waitForStatus(missingId, 'completed');
    expect(restored.error).toBeNull();
    const search = await service.request<{ results: { document_id: string }[] }>('POST', '/api/v1/search', {
      json: { query: 'went missing from storage and was put back', mode: 'keyword' },
    });
    expect(search.body.results.map((r) => r.document_id)).toContain(missingId);

    // The poison file is still poison: failed again, and a new dead letter (a new message) records it.
    await service.waitForStatus(poisonId, 'failed');
    const after = await list();
    const poisonLetters = after.dead_letters.filter((l) => l.document_id === poisonId);
    expect(poisonLetters).toHaveLength(2);
    expect(poisonLetters.filter((l) => l.replay === null)).toHaveLength(1);
    expect(after.dead_letters.find((l) => l.document_id === missingId)?.replay?.outcome).toBe('replayed');

    // Replayed once: the next replay takes only the new dead letter.
    const again = await service.request<DeadLetterReplayView>('POST', '/api/v1/admin/dead-letters/replay', {
      json: {},
    });
    expect(again.status).toBe(200);
    expect(again.body.dead_letters.map((l) => l.document_id)).toEqual([poisonId]);
    expect((await service.waitForStatus(missingId, 'completed')).version).toBe(1);
  });

  it('skips a dead letter whose document is gone, and records it so that it no longer waits', async () => {
    await service.waitForStatus(poisonId, 'failed');
    const del = await service.request('DELETE', `/api/v1/documents/${poisonId}?purge=true`);
    expect([200, 204]).toContain(del.status);
    const pendingBefore = (await list('?state=pending')).dead_letters;
    expect(pendingBefore.map((l) => l.document_id)).toEqual([poisonId]);
    const res = await service.request<DeadLetterReplayView>('POST', '/api/v1/admin/dead-letters/replay', {
      json: {},
    });
    expect(res.body).toMatchObject({ replayed: 0, skipped: 1 });
    expect(res.body.dead_letters[0]?.replay?.detail).toMatch(/no longer exists/);
    expect((await list('?state=pending')).dead_letters).toEqual([]);
  });
});
