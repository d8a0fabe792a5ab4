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

describe('audit entries written to ClickHouse in batches', () => {
  it('one insert carries many entries; the writer reads its own entries, others see them after the flush or close', async () => {
    const options = clickhouseTestOptions();
    cleanups.push(() => dropClickHouseDatabase(options));
    const writer: AccountStore = await createClickHouseAccountStore({
      ...options,
      auditBuffer: { flushMs: 600_000, maxRows: 1_000, maxHeldRows: 10_000 },
    });
    let writerOpen = true;
    cleanups.push(async () => writerOpen && writer.close());
    const reader = await createClickHouseAccountStore(options);
    cleanups.push(() => reader.close());
    const workspaceId = `ws-${randomUUID()}`;

    const before = engineRequestCounts();
    await Promise.all(Array.from({ length: 200 }, (_, i) => writer.appendAudit(entry(workspaceId, i))));
    expect(inserts(before)).toBe(0);
    // Held by the writer (its flush interval is long): another process does not see them yet.
    expect((await reader.listAudit({ workspaceId, limit: 5 })).total).toBe(0);

    await writer.close();
    writerOpen = false;
    expect(inserts(before)).toBe(1);
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
    for (let i = 0; i < 49; i++) await bySize.appendAudit(entry(sized, i));
    await byTime.appendAudit(entry(timed, 0));
    const seen = async (workspaceId: string, total: number) => {
      const deadline = Date.now() + 30_000;
      while ((await reader.listAudit({ workspaceId, limit: 1 })).total < total) {
        if (Date.now() > deadline) throw new Error(`${workspaceId}: fewer than ${total} entries after 30 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // The timed writer's one entry goes out after its interval, with nothing else written.
    await seen(timed, 1);
    expect((await reader.listAudit({ workspaceId: sized, limit: 1 })).total).toBe(0);
    // The 50th entry fills the sized writer's batch: it goes out at once, long before its interval.
    await bySize.appendAudit(entry(sized, 49));
    await seen(sized, 50);
  });

  it('nothing is lost when kb serve gets SIGTERM right after uploads', async () => {
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
    await stopChild(api, 'SIGTERM');
    expect(api.process.exitCode).toBe(0);

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
  });
});
