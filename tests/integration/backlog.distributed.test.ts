import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChildService, createKey, startChild, stopChild } from '../../support/child-service.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { uniqueFile, uploadForm } from '../support/lost-answer.ts';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.ts';

/**
 * Backpressure on the distributed runtime: two API processes share the backlog through
 * OpenSearch (each reads the counts at most a second old, before a write when they are older than
 * two), so a flood spread over both is refused with 429 once the workspace's backlog is full,
 * while another workspace uploads and everyone searches; the whole deployment's bound answers
 * 503. No worker runs at first, so nothing drains; then one does, and uploads are taken again.
 */
const PER_WORKSPACE = 4;
const TOTAL = 7;
const METRICS_TOKEN = 'backlog-distributed-metrics';
/** Longer than the age at which a process reads the store's counts again before a write. */
const READ_AGAIN_MS = 2500;

let setup: DistributedEnv;
let env: Record<string, string>;
let floodKey: string;
let otherKey: string;
let apiA: ChildService;
let apiB: ChildService;
const children: ChildService[] = [];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function upload(api: ChildService, key: string, label: string) {
  const response = await fetch(`${api.url}/api/v1/documents`, {
    method: 'POST',
    headers: { 'X-API-Key': key },
    body: uploadForm(uniqueFile(label)),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function search(api: ChildService, key: string) {
  const response = await fetch(`${api.url}/api/v1/search`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'notes', mode: 'keyword' }),
  });
  return response.status;
}

async function scrape(api: ChildService) {
  const response = await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

beforeAll(async () => {
  setup = distributedEnv();
  env = {
    ...setup.env,
    KB_MAX_BACKLOG_PER_WORKSPACE: String(PER_WORKSPACE),
    KB_MAX_BACKLOG: String(TOTAL),
    KB_METRICS_TOKEN: METRICS_TOKEN,
    KB_EMBEDDING_PROVIDER: 'local',
  };
  [floodKey, otherKey] = (
    await Promise.all(
      ['flood', 'steady'].map((workspace) =>
        createKey(env, { workspace, name: workspace, permissions: 'read,search,write' }),
      ),
    )
  ).map((created) => created.key) as [string, string];
  [apiA, apiB] = await Promise.all([
    startChild(['serve'], env, { timeoutMs: 120_000 }),
    startChild(['serve'], env, { timeoutMs: 120_000 }),
  ]);
  children.push(apiA, apiB);
}, 300_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const child of children) console.error(`--- ${child.url} printed:\n${child.output()}`);
  });
});

afterAll(async () => {
  await Promise.allSettled(children.map((c) => stopChild(c)));
  await setup?.cleanup();
}, 120_000);

describe('backlog bounds across API processes', () => {
  let waiting = 0;

  it('refuses a flood spread over both processes with 429 and Retry-After once the workspace is full', async () => {
    for (let i = 0; i < PER_WORKSPACE; i++) {
      const res = await upload(i % 2 === 0 ? apiA : apiB, floodKey, `flood-${i}`);
      expect(res.status, res.text).toBe(201);
    }
    waiting = PER_WORKSPACE;
    await pause(READ_AGAIN_MS);
    for (const api of [apiA, apiB]) {
      const refused = await upload(api, floodKey, 'flood-refused');
      expect(refused.status, refused.text).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = JSON.parse(refused.text) as { title: string; error: { code: string; retry_after: number } };
      expect(body.title).toBe('Ingestion backlog full');
      expect(body.error.code).toBe('backlog_full');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(body.error.retry_after).toBe(retryAfter);
      expect(await search(api, floodKey)).toBe(200);
    }
  });

  it('lets another workspace upload and search on both, until the deployment is full: then 503', async () => {
    for (let i = 0; i < TOTAL - PER_WORKSPACE; i++) {
      const res = await upload(i % 2 === 0 ? apiB : apiA, otherKey, `steady-${i}`);
      expect(res.status, res.text).toBe(201);
    }
    waiting = TOTAL;
    await pause(READ_AGAIN_MS);
    for (const api of [apiA, apiB]) {
      const refused = await upload(api, otherKey, 'steady-refused');
      expect(refused.status, refused.text).toBe(503);
      expect(refused.text).toContain(`KB_MAX_BACKLOG=${TOTAL}`);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await search(api, otherKey)).toBe(200);
    }
  });

  it('shows the shared backlog in each process’s /metrics', async () => {
    for (const api of [apiA, apiB]) {
      const samples = await scrape(api);
      expect(sampleValue(samples, 'kb_ingestion_backlog', { workspace: 'flood' })).toBe(PER_WORKSPACE);
      expect(sampleValue(samples, 'kb_ingestion_backlog', { workspace: 'steady' })).toBe(TOTAL - PER_WORKSPACE);
      expect(sampleValue(samples, 'kb_ingestion_backlog_overall')).toBe(waiting);
    }
  });

  it('takes uploads again once a worker drains the backlog, and measures the drain rate', async () => {
    const worker = await startChild(['worker'], env, { waitForHttp: false });
    children.push(worker);
    const deadline = Date.now() + 150_000;
    let res = await upload(apiA, floodKey, 'flood-after');
    while (res.status !== 201 && Date.now() < deadline) {
      expect([429, 503]).toContain(res.status);
      await pause(Number(res.headers.get('retry-after')) * 1000);
      res = await upload(apiA, floodKey, 'flood-after');
    }
    expect(res.status, res.text).toBe(201);
    const samples = await scrape(apiB);
    expect(sampleValue(samples, 'kb_ingestion_drain_rate')).toBeGreaterThan(0);
  }, 200_000);
});
