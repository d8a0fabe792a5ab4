/**
 * An engine outage on the real engines, and dead letters. `kb serve` reaches OpenSearch through a
 * TCP proxy that the test cuts for 10 s while documents are being processed (the shared
 * OpenSearch itself keeps running): readiness names OpenSearch while it lasts and recovers by
 * itself, every document completes, nothing is dead-lettered. Then a file that can never be
 * parsed: failed with its code, visible in the dead letters once, and replayable.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadinessView } from '../../core/model/response-views.model.ts';
import type { DeadLetterListView, DeadLetterReplayView } from '../../core/services/dead-letters.service.ts';
import { type ChildService, createKey, REPO_ROOT, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const DOCUMENTS = 24;
const OUTAGE_MS = 10_000;

let setup: DistributedEnv;
let proxy: TcpProxy;
let api: ChildService;
let key: string;

async function call<T>(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${api.url}${pathname}`, {
    method,
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

async function upload(name: string, content: Uint8Array | string, type = 'text/markdown'): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), name);
  const response = await fetch(`${api.url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: form,
  });
  const body = (await response.json()) as { document_id: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.document_id;
}

async function readiness(): Promise<{ status: number; body: ReadinessView }> {
  const response = await fetch(`${api.url}/health/ready`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as ReadinessView };
}

/** Polls until `probe` returns a value, failing after `timeoutMs`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function settled(id: string): Promise<{ status: string; error: { code: string } | null }> {
  return until(
    `document ${id} to settle`,
    async () => {
      const { body } = await call<{ status: string; error: { code: string } | null }>('GET', `/api/v1/documents/${id}`);
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    },
    300_000,
  );
}

beforeAll(async () => {
  setup = distributedEnv();
  const opensearch = new URL(setup.env.KB_OPENSEARCH_URL as string);
  proxy = await startTcpProxy({ host: opensearch.hostname, port: Number(opensearch.port) });
  const env = {
    ...setup.env,
    KB_OPENSEARCH_URL: `http://127.0.0.1:${proxy.port}`,
    // Short in-place waits, so the 10 s outage also hands events back to Kafka to wait again.
    KB_STAGE_ENGINE_WAIT_MS: '4000',
    KB_LOG_LEVEL: 'warn',
  };
  key = (
    await createKey(env, { workspace: 'outage', name: 'outage', permissions: 'read,search,write', plan: 'enterprise' })
  ).key;
  api = await startChild(['serve', '--stages', 'all'], env, { timeoutMs: 180_000 });
}, 300_000);

afterAll(async () => {
  if (api) await stopChild(api);
  await proxy?.close();
  await setup?.cleanup();
}, 120_000);

describe('engine outage and dead letters on the distributed runtime', () => {
  it('waits out a 10 s OpenSearch outage: readiness names it, every document completes, nothing is dead-lettered', async () => {
    const ids: string[] = [];
    for (let i = 0; i < DOCUMENTS; i++) {
      ids.push(
        await upload(
          `tide-${i}.md`,
          `# Tide table ${i}\n\nHigh water at the harbour mouth, entry ${i}, logged by the keeper.\n`.repeat(20),
        ),
      );
    }
    const before = await Promise.all(
      ids.map(async (id) => (await call<{ status: string }>('GET', `/api/v1/documents/${id}`)).body.status),
    );
    await proxy.cut();
    const cutAt = Date.now();
    // Something was still on its way through the stages when OpenSearch went away.
    expect(before.filter((s) => s !== 'completed').length).toBeGreaterThan(0);

    const down = await until(
      'readiness to report OpenSearch',
      async () => {
        const r = await readiness();
        return r.status === 503 ? r : undefined;
      },
      OUTAGE_MS,
    );
    expect(down.body.status).toBe('unhealthy');
    expect(down.body.checks.vector_store).toMatchObject({ status: 'unhealthy' });
    expect(down.body.checks.vector_store?.message).toMatch(/^OpenSearch unavailable/);
    expect(down.body.checks.message_log?.status).not.toBe('unhealthy');

    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + OUTAGE_MS - Date.now())));
    await proxy.restore();

    await until(
      'readiness to recover',
      async () => {
        const r = await readiness();
        return r.status === 200 && r.body.checks.vector_store?.status !== 'unhealthy' ? r : undefined;
      },
      60_000,
    );
    const outcomes = await Promise.all(ids.map(settled));
    expect(outcomes.map((o) => o.status)).toEqual(ids.map(() => 'completed'));
    expect(outcomes.every((o) => o.error === null)).toBe(true);
    // The stages met the outage and waited for it, spending no attempts.
    expect(api.output()).toContain('OpenSearch is unavailable; waiting for it (no attempt spent)');

    const letters = await call<DeadLetterListView>('GET', '/api/v1/admin/dead-letters');
    expect(letters.status).toBe(200);
    expect(letters.body.dead_letters).toEqual([]);
    expect(letters.body.counts.every((c) => c.total === 0)).toBe(true);
  });

  it('fails a poison document visibly, dead-letters it once, and replays it once', async () => {
    const truncated = await readFile(path.join(REPO_ROOT, 'tests', 'fixtures', 'files', 'truncated.pdf'));
    const id = await upload('truncated.pdf', truncated, 'application/pdf');
    const failed = await settled(id);
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toMatch(/^(corrupt-file|no-text|unsupported-content)$/);

    const listed = await until(
      'the dead letter',
      async () => {
        const { body } = await call<DeadLetterListView>('GET', '/api/v1/admin/dead-letters?state=pending');
        return body.dead_letters.length > 0 ? body : undefined;
      },
      60_000,
    );
    expect(listed.dead_letters).toHaveLength(1);
    expect(listed.dead_letters[0]).toMatchObject({
      stage: 'parse',
      document_id: id,
      workspace_id: 'outage',
      error_code: failed.error?.code,
      copies: 1,
      replay: null,
    });
    const ready = await until(
      'readiness to show the pending dead letter',
      async () => {
        const r = await readiness();
        return r.body.checks.dead_letters?.status === 'degraded' ? r : undefined;
      },
      60_000,
    );
    expect(ready.status).toBe(200);

    const replayed = await call<DeadLetterReplayView>('POST', '/api/v1/admin/dead-letters/replay', {});
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ replayed: 1, skipped: 0 });
    // Still poison: it goes through the parse stage again and fails again, into a new dead letter.
    await until(
      'the replayed event to fail again',
      async () => {
        const { body } = await call<DeadLetterListView>('GET', '/api/v1/admin/dead-letters');
        return body.dead_letters.length === 2 ? body : undefined;
      },
      120_000,
    );
    expect((await settled(id)).status).toBe('failed');
    const again = await call<DeadLetterReplayView>('POST', '/api/v1/admin/dead-letters/replay', { stage: 'chunk' });
    expect(again.body.replayed).toBe(0);
    const after = await call<DeadLetterListView>('GET', '/api/v1/admin/dead-letters');
    expect(after.body.dead_letters.filter((l) => l.replay !== null)).toHaveLength(1);
    expect(after.body.dead_letters.filter((l) => l.replay === null)).toHaveLength(1);
  });
});
