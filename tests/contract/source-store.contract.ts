import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ItemRecord,
  type RunRecord,
  type SourceRecord,
  type SourceStore,
  ZERO_COUNTS,
} from '../../core/ports/source-store/source-store.port.ts';

export interface SourceStoreFixture {
  readonly store: SourceStore;
  cleanup(): Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

function sourceRecord(overrides: Partial<SourceRecord> = {}): SourceRecord {
  return {
    id: uuidv7(),
    workspaceId: `ws-${randomUUID()}`,
    name: `docs-${randomUUID().slice(0, 8)}`,
    kind: 'folder',
    location: { path: '/srv/docs' },
    include: ['**/*.md'],
    exclude: ['drafts/**'],
    metadata: { team: 'docs' },
    schedule: 'PT15M',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

function runRecord(source: SourceRecord, at: number, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: uuidv7(),
    sourceId: source.id,
    workspaceId: source.workspaceId,
    status: 'running',
    allowMassDelete: false,
    startedAt: iso(at),
    finishedAt: null,
    heartbeatAt: iso(at),
    counts: ZERO_COUNTS,
    errors: [],
    ...overrides,
  };
}

/** The contract of `SourceStore` (see its TSDoc), run against every adapter. */
export function describeSourceStoreContract(name: string, open: () => Promise<SourceStoreFixture>): void {
  describe(`source store contract: ${name}`, () => {
    let fixture: SourceStoreFixture;
    let store: SourceStore;

    beforeAll(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('keeps a source as created, lists it by workspace and by name, and hides it from other workspaces', async () => {
      const a = sourceRecord({ name: 'b-second' });
      const b = sourceRecord({
        workspaceId: a.workspaceId,
        name: 'a-first',
        kind: 'web',
        location: { urls: ['https://example.com/'] },
      });
      await store.createSource(a);
      await store.createSource(b);
      expect(await store.getSource(a.workspaceId, a.id)).toEqual(a);
      expect((await store.listSources(a.workspaceId)).map((s) => s.name)).toEqual(['a-first', 'b-second']);
      expect(await store.getSource('another-workspace', a.id)).toBeNull();
      expect(await store.listSources('another-workspace')).toEqual([]);
      const everywhere = (await store.listSources(null)).map((s) => s.id);
      expect(everywhere).toEqual(expect.arrayContaining([a.id, b.id]));
    });

    it('refuses a second source with a taken name in the same workspace, not in another one', async () => {
      const first = sourceRecord();
      await store.createSource(first);
      await expect(
        store.createSource(sourceRecord({ workspaceId: first.workspaceId, name: first.name })),
      ).rejects.toMatchObject({
        code: 'conflict',
      });
      await store.createSource(sourceRecord({ name: first.name }));
      const other = await store.createSource(sourceRecord({ workspaceId: first.workspaceId }));
      await expect(store.updateSource(first.workspaceId, other.id, { name: first.name })).rejects.toMatchObject({
        code: 'conflict',
      });
      expect((await store.getSource(first.workspaceId, other.id))?.name).toBe(other.name);
    });

    it('updates only the given fields, and deletes a source with its runs and items', async () => {
      const s = await store.createSource(sourceRecord());
      const updated = await store.updateSource(s.workspaceId, s.id, {
        schedule: null,
        metadata: { team: 'ops' },
        updatedAt: '2026-02-01T00:00:00.000Z',
      });
      expect(updated).toEqual({
        ...s,
        schedule: null,
        metadata: { team: 'ops' },
        updatedAt: '2026-02-01T00:00:00.000Z',
      });
      expect(await store.getSource(s.workspaceId, s.id)).toEqual(updated);
      expect(await store.updateSource('another-workspace', s.id, { schedule: 'PT1H' })).toBeNull();

      const run = runRecord(s, Date.now());
      await store.claimRun(run, iso(Date.now() - 60_000));
      await store.putItem({
        sourceId: s.id,
        itemKey: 'a.md',
        documentId: randomUUID(),
        sizeBytes: 1,
        mtimeMs: 1,
        etag: null,
        lastModified: null,
        sha256: 'x',
      });
      expect(await store.deleteSource('another-workspace', s.id)).toBe(false);
      expect(await store.deleteSource(s.workspaceId, s.id)).toBe(true);
      expect(await store.getSource(s.workspaceId, s.id)).toBeNull();
      expect(await store.getRun(s.id, run.id)).toBeNull();
      expect(await store.listItems(s.id)).toEqual([]);
      expect(await store.deleteSource(s.workspaceId, s.id)).toBe(false);
    });

    it('starts one run per source: a second claim gets the running one until it finishes', async () => {
      const s = await store.createSource(sourceRecord());
      const now = Date.now();
      const first = runRecord(s, now);
      const claimed = await store.claimRun(first, iso(now - 60_000));
      expect(claimed).toEqual({ started: first });
      const second = await store.claimRun(runRecord(s, now + 1), iso(now - 60_000));
      expect(second).toEqual({ running: first });

      // Another source is not held up.
      const otherSource = await store.createSource(sourceRecord({ workspaceId: s.workspaceId }));
      expect('started' in (await store.claimRun(runRecord(otherSource, now), iso(now - 60_000)))).toBe(true);

      const counts = { ...ZERO_COUNTS, seen: 3, created: 2, failed: 1 };
      const errors = [{ item: 'bad.bin', code: 'unsupported-type', detail: 'no' }];
      expect(await store.updateRun(first.id, { counts, errors, heartbeatAt: iso(now + 5) })).toBe(true);
      expect(await store.finishRun(first.id, { status: 'completed', counts, errors, finishedAt: iso(now + 10) })).toBe(
        true,
      );
      expect(await store.getRun(s.id, first.id)).toEqual({
        ...first,
        status: 'completed',
        counts,
        errors,
        heartbeatAt: iso(now + 5),
        finishedAt: iso(now + 10),
      });
      // A finished run changes no more.
      expect(await store.updateRun(first.id, { counts: ZERO_COUNTS, errors: [], heartbeatAt: iso(now + 20) })).toBe(
        false,
      );
      expect(await store.finishRun(first.id, { status: 'failed', counts, errors, finishedAt: iso(now + 20) })).toBe(
        false,
      );
      expect((await store.getRun(s.id, first.id))?.status).toBe('completed');

      const next = runRecord(s, now + 30);
      expect(await store.claimRun(next, iso(now - 60_000))).toEqual({ started: next });
      expect((await store.listRuns(s.id, 10)).map((r) => r.id)).toEqual([next.id, first.id]);
      expect((await store.listRuns(s.id, 1)).map((r) => r.id)).toEqual([next.id]);
      expect((await store.listRunningRuns()).map((r) => r.id)).toContain(next.id);
      expect(await store.getRun(otherSource.id, first.id)).toBeNull();
    });

    it('lets exactly one of many simultaneous claims start a run', async () => {
      const s = await store.createSource(sourceRecord());
      const now = Date.now();
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claimRun(runRecord(s, now + i), iso(now - 60_000))),
      );
      const started = claims.filter((c) => 'started' in c);
      expect(started).toHaveLength(1);
      const winner = (started[0] as { started: RunRecord }).started;
      for (const c of claims) {
        if ('running' in c) expect(c.running.id).toBe(winner.id);
      }
    });

    it('takes over a run whose heartbeat is stale, marking it failed as interrupted', async () => {
      const s = await store.createSource(sourceRecord());
      const now = Date.now();
      const old = runRecord(s, now - 120_000);
      await store.claimRun(old, iso(now - 300_000));
      const fresh = runRecord(s, now);
      expect(await store.claimRun(fresh, iso(now - 60_000))).toEqual({ started: fresh });
      const taken = await store.getRun(s.id, old.id);
      expect(taken?.status).toBe('failed');
      expect(taken?.errors.map((e) => e.code)).toEqual(['sync-interrupted']);
      // The process that ran the old one can no longer write to it.
      expect(await store.updateRun(old.id, { counts: ZERO_COUNTS, errors: [], heartbeatAt: iso(now) })).toBe(false);
    });

    it('keeps items per source by key, replaces them, deletes them, and maps documents to keys', async () => {
      const s = await store.createSource(sourceRecord());
      const other = await store.createSource(sourceRecord({ workspaceId: s.workspaceId }));
      const docA = randomUUID();
      const docB = randomUUID();
      const a: ItemRecord = {
        sourceId: s.id,
        itemKey: 'notes/a.md',
        documentId: docA,
        sizeBytes: 10,
        mtimeMs: 1_700_000_000_000,
        etag: null,
        lastModified: null,
        sha256: 'a'.repeat(64),
      };
      const b: ItemRecord = {
        sourceId: s.id,
        itemKey: 'b.md',
        documentId: docB,
        sizeBytes: null,
        mtimeMs: null,
        etag: '"abc"',
        lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT',
        sha256: null,
      };
      await store.putItem(a);
      await store.putItem(b);
      await store.putItem({ ...a, sourceId: other.id, documentId: randomUUID() });
      expect(await store.listItems(s.id)).toEqual([b, a]);
      const changed = { ...a, sizeBytes: 12, sha256: 'c'.repeat(64) };
      await store.putItem(changed);
      expect(await store.listItems(s.id)).toEqual([b, changed]);
      expect(await store.itemKeysOf([docA, docB, randomUUID()])).toEqual(
        new Map([
          [docA, 'notes/a.md'],
          [docB, 'b.md'],
        ]),
      );
      await store.deleteItem(s.id, 'b.md');
      await store.deleteItem(s.id, 'missing.md');
      expect(await store.listItems(s.id)).toEqual([changed]);
      expect(await store.listItems(other.id)).toHaveLength(1);
    });
  });
}
