/**
 * Retention by plan: versions that stopped being served longer ago than the workspace's
 * plan allows are archived by `kb retention run`: marked `archived`, out of search, their file
 * kept; an `as_of` reaching into archived time says so. Enterprise workspaces keep everything.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RetentionReport, runRetention } from '../../core/services/retention.service.ts';
import { kb } from '../../support/child-service.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';
import { justAfter, listVersions, putContent, search, waitForVersion } from '../support/version-client.ts';

const DAY = 86_400_000;

function article(word: string): string {
  return [
    `The ${word} ledger lists every cargo landed at the tidal quay, with the weight and the owner of each crate.`,
    `Clerks copied the ${word} ledger each evening so that the harbour master could check the tolls before sunrise.`,
  ].join('\n\n');
}

interface Workspace {
  readonly id: string;
  /** Writes and reads. */
  readonly key: string;
  /** Only for polling, so the starter plan's 100 requests a minute per key never get in the way. */
  readonly poller: string;
}

async function workspace(svc: TestService, label: string, plan: 'starter' | 'enterprise'): Promise<Workspace> {
  const id = `${label}-${randomBytes(5).toString('hex')}`;
  const key = await svc.createKey({ permissions: ['read', 'search', 'write'], plan, workspaceId: id });
  const poller = await svc.createKey({ permissions: ['read'], plan, workspaceId: id });
  return { id, key: key.key, poller: poller.key };
}

/** Uploads v1 (`first`), replaces it with v2 (`second`); returns the id and the instants each was served. */
async function twoVersions(svc: TestService, ws: Workspace, first: string, second: string) {
  const up = await svc.upload('quay.txt', article(first), { key: ws.key });
  expect(up.status, up.text).toBe(201);
  const id: string = up.body.document_id;
  await waitForVersion(svc, id, 1, { key: ws.poller, intervalMs: 250 });
  const t1 = Date.now();
  const put = await putContent(svc, id, 'quay.txt', article(second), { key: ws.key });
  expect(put.status, put.text).toBe(200);
  await waitForVersion(svc, id, 2, { key: ws.poller, intervalMs: 250 });
  const t2 = Date.now();
  return { id, t1, t2 };
}

const reportOf = (reports: RetentionReport[], workspaceId: string) =>
  reports.find((r) => r.workspaceId === workspaceId);

describe('retention run with an injected clock', () => {
  let svc: TestService;
  let starter: Workspace;
  let enterprise: Workspace;
  let s: { id: string; t1: number; t2: number };
  let e: { id: string; t1: number; t2: number };
  const run = (now: number) =>
    runRetention(
      { documents: svc.runtime.ports.documents, accountStore: svc.runtime.ports.accountStore },
      { now: new Date(now) },
    );

  beforeAll(async () => {
    svc = await startTestService();
    starter = await workspace(svc, 'starter', 'starter');
    enterprise = await workspace(svc, 'enterprise', 'enterprise');
    s = await twoVersions(svc, starter, 'marigold', 'tamarind');
    e = await twoVersions(svc, enterprise, 'cormorant', 'pelican');
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('leaves versions superseded less than 30 days ago alone', async () => {
    const reports = await run(Date.now() + 29 * DAY);
    expect(reportOf(reports, starter.id)).toMatchObject({ plan: 'starter', archived: 0 });
    const versions = await listVersions(svc, s.id, '/api/v1', starter.key);
    expect(versions.map((v) => v.archived)).toEqual([false, false]);
    const before = await search(svc, 'marigold tamarind ledger', { asOf: justAfter(s.t1), key: starter.key });
    expect(before.results.length).toBeGreaterThan(0);
    expect(before.results.every((r) => r.version === 1)).toBe(true);
    expect(before.warnings).toBeUndefined();
  });

  it('archives starter versions superseded more than 30 days ago, never enterprise ones', async () => {
    const now = Date.now() + 31 * DAY;
    const reports = await run(now);
    expect(reportOf(reports, starter.id)).toEqual({
      workspaceId: starter.id,
      plan: 'starter',
      cutoff: new Date(now - 30 * DAY).toISOString(),
      archived: 1,
    });
    expect(reportOf(reports, enterprise.id)).toEqual({
      workspaceId: enterprise.id,
      plan: 'enterprise',
      cutoff: null,
      archived: 0,
    });
    // Ten years on, enterprise history is still whole; the served starter version is never archived.
    const later = await run(Date.now() + 3650 * DAY);
    expect(reportOf(later, enterprise.id)?.archived).toBe(0);
    expect(reportOf(later, starter.id)?.archived).toBe(0);
  });

  it('marks the archived version in the versions list', async () => {
    for (const prefix of ['/api/v1', '/v1'] as const) {
      const res = await svc.request('GET', `${prefix}/documents/${s.id}/versions`, { key: starter.key });
      expect(res.status).toBe(200);
      expect(res.body.versions.map((v: { version: number; archived: boolean }) => [v.version, v.archived])).toEqual([
        [2, false],
        [1, true],
      ]);
    }
    const detail = await svc.request('GET', `/v1/documents/${s.id}/versions/1`, { key: starter.key });
    expect(detail.body).toMatchObject({ version: 1, archived: true, storage_url: expect.any(String) });
    const enterpriseVersions = await svc.request('GET', `/v1/documents/${e.id}/versions`, { key: enterprise.key });
    expect(enterpriseVersions.body.versions.map((v: { archived: boolean }) => v.archived)).toEqual([false, false]);
  });

  it('takes archived chunks out of search and warns when as_of reaches into archived time', async () => {
    const query = 'marigold tamarind ledger';
    for (const prefix of ['/api/v1', '/v1'] as const) {
      const past = await search(svc, query, { asOf: justAfter(s.t1), prefix, key: starter.key });
      expect(past.results).toEqual([]);
      expect(past.warnings?.length).toBe(1);
      expect(past.warnings?.[0]).toMatch(/archived/);
    }
    // After the archived version stopped being served: v2, and nothing to warn about.
    const afterwards = await search(svc, query, { asOf: justAfter(s.t2), key: starter.key });
    expect(afterwards.results.length).toBeGreaterThan(0);
    expect(afterwards.results.every((r) => r.version === 2 && !r.content.includes('marigold'))).toBe(true);
    expect(afterwards.warnings).toBeUndefined();
    const current = await search(svc, query, { key: starter.key });
    expect(current.results.every((r) => r.version === 2)).toBe(true);
    expect(current.warnings).toBeUndefined();

    // The enterprise workspace still answers its old instant with its first version.
    const old = await search(svc, 'cormorant pelican ledger', { asOf: justAfter(e.t1), key: enterprise.key });
    expect(old.results.length).toBeGreaterThan(0);
    expect(old.results.every((r) => r.version === 1 && r.content.includes('cormorant'))).toBe(true);
    expect(old.warnings).toBeUndefined();
  });

  it('refuses to compare an archived version but restores it from the kept file', async () => {
    expectProblem(
      await svc.request('GET', `/api/v1/documents/${s.id}/versions/compare?from=1&to=2`, { key: starter.key }),
      409,
      'conflict',
    );
    const rollback = await svc.request('POST', `/v1/documents/${s.id}/rollback`, {
      key: starter.key,
      json: { target_version: 1 },
    });
    expect(rollback.status).toBe(201);
    expect(rollback.body).toMatchObject({ version: 3, restored_from: 1 });
    // No chunks left to copy: the file goes through the pipeline again.
    await waitForVersion(svc, s.id, 3, { key: starter.poller, intervalMs: 250 });
    const restored = await search(svc, 'marigold ledger', { key: starter.key, documentIds: [s.id] });
    expect(restored.results.length).toBeGreaterThan(0);
    expect(restored.results.every((r) => r.version === 3 && r.content.includes('marigold'))).toBe(true);
    // A second run has nothing new to archive until version 2 has been superseded for 30 days.
    expect(reportOf(await run(Date.now() + 29 * DAY), starter.id)?.archived).toBe(0);
    expect(reportOf(await run(Date.now() + 31 * DAY), starter.id)?.archived).toBe(1);
  });
});

describe('kb retention run (the CLI) on a fresh data directory', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-retention-'));
  });
  afterAll(async () => {
    vi.useRealTimers();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('archives what is older than the plan allows and prints one line per workspace', {
    timeout: 180_000,
  }, async () => {
    // Build the history 40 days in the past: the service's clock is moved back while it runs
    // (time still advances), then the CLI runs in its own process with the real clock.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 40 * DAY, shouldAdvanceTime: true });
    let starter: Workspace;
    let enterprise: Workspace;
    let s: { id: string; t1: number };
    const svc = await startTestService({ dataDir });
    try {
      starter = await workspace(svc, 'starter', 'starter');
      enterprise = await workspace(svc, 'enterprise', 'enterprise');
      s = await twoVersions(svc, starter, 'marigold', 'tamarind');
      await twoVersions(svc, enterprise, 'cormorant', 'pelican');
    } finally {
      await svc.close();
      vi.useRealTimers();
    }
    expect(Date.now() - s.t1).toBeGreaterThan(35 * DAY);

    const out = await kb(['retention', 'run'], {
      KB_RUNTIME: 'embedded',
      KB_DATA_DIR: dataDir,
      KB_LOG_LEVEL: 'silent',
    });
    const rows = out
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    expect(rows[0]).toEqual(['WORKSPACE', 'PLAN', 'CUTOFF', 'ARCHIVED']);
    const row = (id: string) => rows.find((r) => r[0] === id);
    expect(row(starter.id)?.slice(1, 2)).toEqual(['starter']);
    expect(row(starter.id)?.[3]).toBe('1');
    const cutoff = Date.parse(row(starter.id)?.[2] as string);
    expect(Math.abs(cutoff - (Date.now() - 30 * DAY))).toBeLessThan(5 * 60_000);
    expect(row(enterprise.id)?.slice(1)).toEqual(['enterprise', 'unlimited', '0']);

    // What the CLI did is what the API shows.
    const again = await startTestService({ dataDir });
    try {
      const reader = await again.createKey({
        permissions: ['read', 'search'],
        plan: 'starter',
        workspaceId: starter.id,
      });
      const versions = await again.request('GET', `/v1/documents/${s.id}/versions`, { key: reader.key });
      expect(versions.body.versions.map((v: { archived: boolean }) => v.archived)).toEqual([false, true]);
      const past = await search(again, 'marigold ledger', { asOf: justAfter(s.t1), key: reader.key });
      expect(past.results).toEqual([]);
      expect(past.warnings?.[0]).toMatch(/archived/);
    } finally {
      await again.close();
    }
    // Nothing left to do on a second run.
    const second = await kb(['retention', 'run'], {
      KB_RUNTIME: 'embedded',
      KB_DATA_DIR: dataDir,
      KB_LOG_LEVEL: 'silent',
    });
    expect(second).toMatch(new RegExp(`${starter.id}\\s+starter\\s+\\S+\\s+0`));
  });
});
