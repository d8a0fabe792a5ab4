import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/**
 * Backpressure: once a workspace has as many versions waiting for ingestion as it may
 * (`KB_MAX_BACKLOG_PER_WORKSPACE`), writes that queue ingestion are refused with 429 and
 * `Retry-After` before their file is stored, while reads, searches, metadata changes, deletes and
 * other workspaces go on; the whole service's bound (`KB_MAX_BACKLOG`) answers 503.
 */
const PER_WORKSPACE = 4;
const TOTAL = 7;
const METRICS_TOKEN = 'backlog-metrics-token';

async function scrape(svc: TestService) {
  const res = await svc.request('GET', '/metrics', {
    key: null,
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(res.status).toBe(200);
  return parsePrometheusText(res.text);
}

describe('a flood past the backlog bound (no stages: nothing drains)', () => {
  let svc: TestService;
  const accepted: string[] = [];

  beforeAll(async () => {
    svc = await startTestService({
      stages: 'none',
      env: {
        KB_MAX_BACKLOG_PER_WORKSPACE: String(PER_WORKSPACE),
        KB_MAX_BACKLOG: String(TOTAL),
        KB_METRICS_TOKEN: METRICS_TOKEN,
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('takes uploads up to the bound, then answers 429 with Retry-After and stores nothing', async () => {
    for (let i = 0; i < PER_WORKSPACE; i++) {
      const res = await svc.upload(`flood-${i}.txt`, `flood document ${i} about tidal pools`);
      expect(res.status, res.text).toBe(201);
      accepted.push(res.body.document_id);
    }
    const stored = await svc.storedObjects();
    const refused = await svc.upload('one-too-many.txt', 'one document too many');
    const problem = expectProblem(refused, 429, 'rate-limit-exceeded');
    expect(problem.title).toBe('Ingestion backlog full');
    expect(problem.error?.code).toBe('backlog_full');
    expect(problem.detail).toContain(`KB_MAX_BACKLOG_PER_WORKSPACE=${PER_WORKSPACE}`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(problem.error?.retry_after).toBe(retryAfter);
    expect(await svc.storedObjects()).toEqual(stored);
  });

  it('refuses new content, reprocessing and a rollback that must be ingested, but not reads, searches, metadata changes or deletes', async () => {
    const [first, second, third] = accepted as [string, string, string];
    expectProblem(await svc.upload('new.txt', 'new content', { documentId: first }), 429, 'rate-limit-exceeded');
    expectProblem(await svc.request('POST', `/api/v1/documents/${first}/reprocess`), 429, 'rate-limit-exceeded');

    expect((await svc.request('GET', `/api/v1/documents/${first}`)).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/documents')).status).toBe(200);
    const search = await svc.request('POST', '/api/v1/search', { json: { query: 'tidal pools', mode: 'keyword' } });
    expect(search.status, search.text).toBe(200);
    const patched = await svc.request('PATCH', `/api/v1/documents/${second}`, { json: { metadata: { team: 'ops' } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.version).toBe(2);
    // Version 1 never completed, so rolling back to it must ingest it again.
    const rollback = await svc.request('POST', `/api/v1/documents/${second}/rollback`, {
      json: { target_version: 1 },
    });
    expectProblem(rollback, 429, 'rate-limit-exceeded');
    expect((await svc.request('DELETE', `/api/v1/documents/${third}`)).status).toBe(204);
  });

  it('lets another workspace upload until the whole service is at its bound, then answers 503 with Retry-After', async () => {
    // The metadata change queued one more version of workspace A: 5 waiting, the other may add 2.
    const other = svc.keys.otherWorkspace;
    for (let i = 0; i < TOTAL - PER_WORKSPACE - 1; i++) {
      const res = await svc.upload(`other-${i}.txt`, `another workspace's document ${i}`, { key: other });
      expect(res.status, res.text).toBe(201);
    }
    const refused = await svc.upload('other-full.txt', 'the service is full', { key: other });
    const problem = expectProblem(refused, 503, 'service-unavailable');
    expect(problem.detail).toContain(`KB_MAX_BACKLOG=${TOTAL}`);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const search = await svc.request('POST', '/api/v1/search', {
      key: other,
      json: { query: 'document', mode: 'keyword' },
    });
    expect(search.status).toBe(200);
  });

  it('shows the backlog per workspace and in all, and the bounds, in /metrics', async () => {
    const samples = await scrape(svc);
    expect(sampleValue(samples, 'kb_ingestion_backlog', { workspace: svc.workspaceId })).toBe(PER_WORKSPACE + 1);
    expect(sampleValue(samples, 'kb_ingestion_backlog', { workspace: svc.otherWorkspaceId })).toBe(
      TOTAL - PER_WORKSPACE - 1,
    );
    expect(sampleValue(samples, 'kb_ingestion_backlog_overall')).toBe(TOTAL);
    expect(sampleValue(samples, 'kb_ingestion_drain_rate')).toBe(0);
    expect(sampleValue(samples, 'kb_ingestion_backlog_limit', { scope: 'workspace' })).toBe(PER_WORKSPACE);
    expect(sampleValue(samples, 'kb_ingestion_backlog_limit', { scope: 'deployment' })).toBe(TOTAL);
  });

  it('takes uploads again once the backlog has room', async () => {
    for (const id of accepted) {
      const purged = await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`);
      expect([204, 404]).toContain(purged.status);
    }
    // The store's counts are read again at most a second later.
    const deadline = Date.now() + 10_000;
    let res = await svc.upload('room-again.txt', 'room again');
    while (res.status === 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      res = await svc.upload('room-again.txt', 'room again');
    }
    expect(res.status, res.text).toBe(201);
  });
});

describe('concurrent uploads at the bound', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ stages: 'none', env: { KB_MAX_BACKLOG_PER_WORKSPACE: '3', KB_MAX_BACKLOG: '0' } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('accepts exactly as many as there is room for', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => svc.upload(`race-${i}.txt`, `racing upload ${i}`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    const listed = await svc.request('GET', '/api/v1/documents?limit=100');
    expect(listed.body.documents).toHaveLength(3);
  });
});

describe('a client that honours Retry-After while the pipeline drains', () => {
  let svc: TestService;
  const BOUND = 3;
  beforeAll(async () => {
    svc = await startTestService({
      stages: 'all',
      env: { KB_MAX_BACKLOG_PER_WORKSPACE: String(BOUND), KB_METRICS_TOKEN: METRICS_TOKEN },
    });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('gets every document in, never holding more than the bound waiting', async () => {
    const ids: string[] = [];
    let refusals = 0;
    let mostWaiting = 0;
    for (let i = 0; i < 8; i++) {
      for (;;) {
        const res = await svc.upload(`drain-${i}.md`, `# Drain ${i}\n\nA note about estuary sediment number ${i}.`);
        if (res.status === 201) {
          ids.push(res.body.document_id);
          break;
        }
        expectProblem(res, 429, 'rate-limit-exceeded');
        refusals += 1;
        const retryAfter = Number(res.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      }
      const view = await svc.runtime.services.backlog.view();
      mostWaiting = Math.max(mostWaiting, view.workspaces[svc.workspaceId] ?? 0);
    }
    expect(refusals).toBeGreaterThan(0);
    expect(mostWaiting).toBeLessThanOrEqual(BOUND);
    for (const id of ids) await svc.waitForStatus(id, 'completed', { timeoutMs: 120_000 });
    // The counts are read from the store at most once a second.
    let samples = await scrape(svc);
    for (let i = 0; i < 20 && sampleValue(samples, 'kb_ingestion_backlog_overall') !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      samples = await scrape(svc);
    }
    expect(sampleValue(samples, 'kb_ingestion_backlog_overall')).toBe(0);
    expect(sampleValue(samples, 'kb_ingestion_drain_rate')).toBeGreaterThan(0);
  }, 180_000);
});
