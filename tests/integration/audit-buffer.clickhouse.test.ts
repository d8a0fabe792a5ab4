import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../core/model/account-records.model.ts';
import type { AccountStore } from '../../core/ports/account-store/account-store.port.ts';
import { createClickHouseAccountStore } from '../../core/ports/account-store/clickhouse.adapter.ts';
import { engineRequestCounts, engineRequestGrowth } from '../../core/util/engine-requests.ts';
import { createKey, startChild, stopChild } from '../../support/child-service.ts';
import { clickhouseTestOptions, dropClickHouseDatabase } from '../support/clickhouse-test-db.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

function entry(workspaceId: string, i: number): AuditEntry {
  return {
    id: `0190f000-0000-7000-8000-${String(i).padStart(12, '0')}`,
    action: 'create',
    workspaceId,
    documentId: `doc-${i}`,
    actor: { type: 'api_key', id: 'key-1' },
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    version: 1,
    before: null,
    after: { version: 1, metadata: {} },
    changeReason: null,
    traceId: `trace-${i}`,
  };
}

const inserts = (before: ReturnType<typeof engineRequestCounts>) =>
  engineRequestGrowth(before, engineRequestCounts()).find((c) => c.engine === 'clickhouse' && c.operation === 'insert')
    ?.count ?? 0;

describe('audit entries written to ClickHouse together', () => {
  it('concurrent entries share an insert, and each is written when appendAudit resolves', async () => {
    const options = clickhouseTestOptions();
    cleanups.push(() => dropClickHouseDatabase(options));
    const writer: AccountStore = await createClickHouseAccountStore({
      ...options,
      auditBuffer: { flushMs: 50, maxRows: 1_000, maxHeldRows: 10_000 },
    });
    cleanups.push(() => writer.close());
    const reader = await createClickHouseAccountStore(options);
    cleanups.push(() => reader.close());
    const workspaceId = `ws-${randomUUID()}`;

    const before = engineRequestCounts();
    await Promise.all(Array.from({ length: 200 }, (_, i) => writer.appendAudit(entry(workspaceId, i))));
    // Written by the time the writes resolved (another process sees them), in a few inserts.
    expect(inserts(before)).toBeGreaterThanOrEqual(1);
    expect(inserts(before)).toBeLessThanOrEqual(3);
    const listed = await reader.listAudit({ workspaceId, limit: 500 });
    expect(listed.total).toBe(200);
    expect(listed.entries.map((e) => e.documentId)).toEqual(Array.from({ length: 200 }, (_, i) => `doc-${i}`));
  });

  it('flushes by size and by time', async () => {
    const options = clickhouseTestOptions();
    cleanups.push(() => dropClickHouseDatabase(options));
    const bySize = await createClickHouseAccountStore({
      ...options,
      auditBuffer: { flushMs: 600_000, maxRows: 50, maxHeldRows: 10_000 },
    });
    cleanups.push(() => bySize.close());
    const byTime = await createClickHouseAccountStore({
      ...options,
      auditBuffer: { flushMs: 300, maxRows: 1_000, maxHeldRows: 10_000 },
    });
    cleanups.push(() => byTime.close());
    const reader = await createClickHouseAccountStore(options);
    cleanups.push(() => reader.close());
    const sized = `ws-${randomUUID()}`;
    const timed = `ws-${randomUUID()}`;
    // 49 entries wait for the sized writer's batch (its interval is long): nothing is written yet.
    const waiting = Array.from({ length: 49 }, (_, i) => bySize.appendAudit(entry(sized, i)));
    const started = Date.now();
    await byTime.appendAudit(entry(timed, 0));
    // The timed writer's one entry went out after its interval, and is there once its append resolved.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect((await reader.listAudit({ workspaceId: timed, limit: 1 })).total).toBe(1);
    expect((await reader.listAudit({ workspaceId: sized, limit: 1 })).total).toBe(0);
    // The 50th entry fills the sized writer's batch: it goes out at once, long before its interval.
    await Promise.all([...waiting, bySize.appendAudit(entry(sized, 49))]);
    expect((await reader.listAudit({ workspaceId: sized, limit: 1 })).total).toBe(50);
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'nothing is lost when kb serve gets %s right after uploads',
    async (signal) => {
      const setup: DistributedEnv = distributedEnv();
      cleanups.push(() => setup.cleanup());
      const key = await createKey(setup.env, { workspace: 'audit', name: 'a', permissions: 'read,write' });
      const api = await startChild(['serve', '--stages', 'none'], setup.env, { timeoutMs: 120_000 });
      cleanups.push(() => stopChild(api));
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const form = new FormData();
        form.append('file', new Blob([`Audit note ${i}.`]), `note-${i}.txt`);
        const response = await fetch(`${api.url}/api/v1/documents`, {
          method: 'POST',
          headers: { 'X-API-Key': key.key },
          body: form,
        });
        expect(response.status).toBe(201);
        const body = (await response.json()) as { id?: string; document_id?: string };
        ids.push(String(body.document_id ?? body.id));
      }
      await stopChild(api, signal);
      // Killed, it wrote nothing more on its way out: the entries were written before the answers.
      expect(api.process.exitCode).toBe(signal === 'SIGTERM' ? 0 : null);

      const store = await createClickHouseAccountStore({
        url: setup.config.runtime === 'distributed' ? setup.config.clickhouse.url : '',
        user: setup.env.KB_CLICKHOUSE_USER ?? 'default',
        password: setup.env.KB_CLICKHOUSE_PASSWORD ?? '',
        database: setup.env.KB_CLICKHOUSE_DATABASE as string,
      });
      cleanups.push(() => store.close());
      const { entries } = await store.listAudit({ workspaceId: 'audit', limit: 100 });
      expect(
        entries
          .filter((e) => e.action === 'create')
          .map((e) => e.documentId)
          .sort(),
      ).toEqual([...ids].sort());
    },
  );
});
