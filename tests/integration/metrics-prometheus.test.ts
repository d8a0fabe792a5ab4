import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, createKey, REPO_ROOT, startChild, stopChild } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { type DistributedEnv, distributedEnv } from '../support/distributed-env.ts';
import { type PrometheusServer, prometheusBinary, startPrometheus } from '../support/prometheus-server.ts';

/**
 * A real Prometheus server scrapes `/metrics` from `kb serve` (API port, bearer token) and from a
 * `kb worker` (its own metrics port) on the distributed runtime. The worker runs parse and chunk
 * only, so documents pile up before embed: Prometheus must see that lag per stage and partition.
 */
const binary = prometheusBinary();
if (!binary) {
  console.warn(
    'metrics-prometheus: skipped — no Prometheus binary (apt-get install prometheus, or set KB_TEST_PROMETHEUS).',
  );
}

const TOKEN = 'metrics-test-token';
let setup: DistributedEnv;
let api: ChildService;
let worker: ChildService;
let prometheus: PrometheusServer;
let key: string;

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.skipIf(!binary)('Prometheus scraping kb serve and kb worker', () => {
  beforeAll(async () => {
    setup = distributedEnv();
    const env = { ...setup.env, KB_METRICS_TOKEN: TOKEN };
    key = (await createKey(env, { workspace: 'metrics', name: 'm', permissions: 'read,write' })).key;
    api = await startChild(['serve'], env, { timeoutMs: 120_000 });
    const workerPort = await freePort();
    worker = await startChild(['worker', '--stages', 'parse,chunk', '--metrics-port', String(workerPort)], env, {
      waitForHttp: false,
    });
    prometheus = await startPrometheus(binary as string, [
      { job: 'kb-api', address: new URL(api.url).host, bearerToken: TOKEN },
      { job: 'kb-worker', address: `127.0.0.1:${workerPort}`, bearerToken: TOKEN },
    ]);
  }, 300_000);

  afterAll(async () => {
    await prometheus?.stop();
    await Promise.allSettled([api, worker].filter(Boolean).map((c) => stopChild(c)));
    await setup?.cleanup();
  }, 120_000);

  it('finds both targets up and the lag of every stage, per partition', async () => {
    for (let i = 0; i < 3; i++) {
      const form = new FormData();
      form.append('file', new Blob([`# Note ${i}\n\nLag is what piles up before a stage.\n`]), `note-${i}.md`);
      const response = await fetch(`${api.url}/api/v1/documents`, {
        method: 'POST',
        headers: { 'X-API-Key': key },
        body: form,
      });
      expect(response.status).toBe(201);
    }

    const up = await eventually(
      () => prometheus.query('up'),
      (rows) => rows.length === 2 && rows.every((r) => r.value === 1),
      'targets up',
    );
    expect(up.map((r) => r.labels.job).sort()).toEqual(['kb-api', 'kb-worker']);

    // Parse and chunk ran in the worker; nobody consumes for embed, so its lag holds the 3 documents.
    const embedLag = await eventually(
      () => prometheus.query('sum by (stage) (max by (stage, partition) (kb_consumer_lag{stage="embed"}))'),
      (rows) => rows[0]?.value === 3,
      'embed lag',
    );
    expect(embedLag[0]?.labels.stage).toBe('embed');

    const perStage = await prometheus.query('count by (stage, job) (kb_consumer_lag)');
    const seen = new Set(perStage.map((r) => `${r.labels.job}/${r.labels.stage}`));
    for (const job of ['kb-api', 'kb-worker']) {
      for (const stage of ['parse', 'chunk', 'embed', 'index']) expect(seen.has(`${job}/${stage}`)).toBe(true);
    }
    // One series per partition of the input topic (KB_KAFKA_PARTITIONS is 4 in the test setup).
    expect(perStage.every((r) => r.value === 4)).toBe(true);

    const parseLag = await eventually(
      () => prometheus.query('max(kb_consumer_lag{stage="parse", job="kb-worker"})'),
      (rows) => rows[0]?.value === 0,
      'parse lag drained',
    );
    expect(parseLag[0]?.value).toBe(0);

    const processed = await eventually(
      () => prometheus.query('sum by (stage) (kb_stage_messages_processed_total{job="kb-worker"})'),
      (rows) => rows.find((r) => r.labels.stage === 'chunk')?.value === 3,
      'chunk processed',
    );
    expect(processed.find((r) => r.labels.stage === 'parse')?.value).toBe(3);

    const uploads = await prometheus.query(
      'sum(kb_http_requests_total{job="kb-api", route="/api/v1/documents", method="POST", status="201"})',
    );
    expect(uploads[0]?.value).toBe(3);
    const documents = await prometheus.query('kb_documents{job="kb-api", status="processing"}');
    expect(documents[0]?.value).toBe(3);

    // The adapters' request counters: the API wrote the uploads (MinIO), the documents (OpenSearch)
    // and their events (Kafka Produce); the worker fetched them (Kafka Fetch) and read the files.
    const requests = await prometheus.query('sum by (job, engine) (kb_engine_requests_total)');
    const sent = new Map(requests.map((r) => [`${r.labels.job}/${r.labels.engine}`, r.value]));
    for (const series of ['kb-api/opensearch', 'kb-api/kafka', 'kb-api/minio', 'kb-worker/kafka', 'kb-worker/minio']) {
      expect(sent.get(series), series).toBeGreaterThan(0);
    }
    const produced = await prometheus.query(
      'sum(kb_engine_requests_total{job="kb-api", engine="kafka", operation="Produce"})',
    );
    expect(produced[0]?.value).toBeGreaterThanOrEqual(1);
    const fetched = await prometheus.query(
      'sum(kb_engine_requests_total{job="kb-worker", engine="kafka", operation="Fetch"})',
    );
    expect(fetched[0]?.value).toBeGreaterThanOrEqual(1);
  });

  it('answers every query of the Grafana dashboard, with data for lag, throughput, documents and HTTP', async () => {
    const file = path.join(REPO_ROOT, 'deploy', 'grafana', 'dashboards', 'kb-operations.json');
    const dashboard = JSON.parse(await readFile(file, 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const withData = new Set([
      'Consumer lag by stage',
      'Consumer lag by partition',
      'Events processed per second',
      'Stage handler latency (p50, p95)',
      'Consumers per stage service',
      'Documents by status',
      'Requests per second by status',
      'Request latency p95 by route',
      'Process memory (RSS)',
    ]);
    let queries = 0;
    for (const panel of dashboard.panels) {
      const exprs = (panel.targets ?? []).map((t) =>
        t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$stage', '.*'),
      );
      queries += exprs.length;
      // Every query must parse and run; a rate needs two scrapes of a counter before it has data.
      const read = async () => (await Promise.all(exprs.map((e) => prometheus.query(e)))).flat();
      const results = withData.has(panel.title)
        ? await eventually(read, (rows) => rows.length > 0, panel.title)
        : await read();
      if (withData.has(panel.title)) expect(results.length, panel.title).toBeGreaterThan(0);
    }
    expect(queries).toBeGreaterThanOrEqual(15);
  });

  it("accepts deploy/'s scrape configuration and alert rules (promtool)", () => {
    // promtool ships with Prometheus, beside its binary.
    const promtool = path.isAbsolute(binary as string)
      ? path.join(path.dirname(binary as string), 'promtool')
      : 'promtool';
    const checked = spawnSync(
      promtool,
      ['check', 'config', path.join(REPO_ROOT, 'deploy', 'prometheus', 'prometheus.yml')],
      {
        encoding: 'utf8',
      },
    );
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toContain('SUCCESS: 5 rules found');
  });
});
