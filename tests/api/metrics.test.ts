import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../../apps/api/metrics-server.ts';
import { fixture } from '../fixtures/hostile-files.ts';
import { parsePrometheusText, type Sample, sampleValue } from '../support/prometheus-text.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/** `/metrics` of the embedded runtime (API and every stage in one process), read as a scraper would. */
const TOKEN = 'scrape-token-for-tests';
let service: TestService;

async function scrape(): Promise<Sample[]> {
  const res = await service.request('GET', '/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.text);
}

beforeAll(async () => {
  service = await startTestService({ env: { KB_METRICS_TOKEN: TOKEN, KB_EMBEDDING_PROVIDER: 'local' } });
});
afterAll(async () => {
  await service?.close();
});

describe('/metrics on the API port', () => {
  it('answers only with the bearer token', async () => {
    const none = await service.request('GET', '/metrics', { key: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/problem\+json/);
    const wrong = await service.request('GET', '/metrics', { key: null, headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    // An API key is not a metrics token.
    const apiKey = await service.request('GET', '/metrics', {
      key: null,
      headers: { authorization: `Bearer ${service.keys.all}` },
    });
    expect(apiKey.status).toBe(401);
  });

  it('counts requests by route pattern, method and status, with latency', async () => {
    const missing = '0199aaaa-0000-7000-8000-000000000000';
    expect((await service.request('GET', `/api/v1/documents/${missing}`)).status).toBe(404);
    expect((await service.request('GET', `/v1/documents/${missing}`)).status).toBe(404);
    const samples = await scrape();
    const labels = { route: '/api/v1/documents/:id', method: 'GET', status: '404' };
    expect(sampleValue(samples, 'kb_http_requests_total', labels)).toBe(1);
    expect(sampleValue(samples, 'kb_http_request_duration_seconds_count', labels)).toBe(1);
    expect(sampleValue(samples, 'kb_http_requests_total', { ...labels, route: '/v1/documents/:id' })).toBe(1);
    // Scrapes themselves are not counted.
    expect(samples.some((s) => s.labels.route === '/metrics')).toBe(false);
  });

  it('follows a document through every stage, and a file that fails into the dead-letter count', async () => {
    const good = await service.upload('notes.md', '# Notes\n\nMetrics follow documents through the stages.\n');
    expect(good.status).toBe(201);
    await service.waitForStatus(good.body.document_id, 'completed');
    const bad = await service.upload('truncated.pdf', fixture('truncated.pdf'), { type: 'application/pdf' });
    expect(bad.status).toBe(201);
    await service.waitForStatus(bad.body.document_id, 'failed');

    const samples = await scrape();
    for (const stage of ['chunk', 'embed', 'index']) {
      expect(sampleValue(samples, 'kb_stage_messages_processed_total', { stage })).toBe(1);
      expect(sampleValue(samples, 'kb_stage_handler_duration_seconds_count', { stage, outcome: 'processed' })).toBe(1);
    }
    expect(sampleValue(samples, 'kb_stage_messages_processed_total', { stage: 'parse' })).toBe(1);
    expect(sampleValue(samples, 'kb_stage_messages_failed_total', { stage: 'parse' })).toBe(1);
    expect(sampleValue(samples, 'kb_stage_messages_dead_lettered_total', { stage: 'parse' })).toBe(1);
    expect(sampleValue(samples, 'kb_stage_messages_retried_total', { stage: 'parse' })).toBeUndefined();
    expect(sampleValue(samples, 'kb_embedding_chunks_total')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'kb_embedding_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'kb_documents', { status: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'kb_documents', { status: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'kb_documents', { status: 'pending' })).toBe(0);
    // Nothing waits for ingestion any more.
    expect(sampleValue(samples, 'kb_ingestion_backlog_overall')).toBe(0);
    expect(samples.filter((s) => s.name === 'kb_ingestion_backlog')).toEqual([]);
    expect(sampleValue(samples, 'kb_ingestion_drain_rate')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'kb_ingestion_backlog_limit', { scope: 'workspace' })).toBe(2000);
    // Every stage's lag, one series per partition of its input topic, all drained.
    for (const stage of ['parse', 'chunk', 'embed', 'index']) {
      const lag = samples.filter((s) => s.name === 'kb_consumer_lag' && s.labels.stage === stage);
      expect(lag.length).toBe(service.runtime.config.kafka.partitions);
      expect(lag.every((s) => s.value === 0)).toBe(true);
    }
    expect(sampleValue(samples, 'kb_metrics_probe_up', { gauge: 'kb_consumer_lag' })).toBe(1);
  });

  it('counts rate-limit rejections by plan', async () => {
    const { key } = await service.createKey({ permissions: ['read'], plan: 'starter' });
    let refused = 0;
    for (let i = 0; i < 102; i++) {
      const res = await service.request('GET', '/api/v1/documents?limit=1', { key });
      if (res.status === 429) refused++;
    }
    expect(refused).toBe(2);
    expect(sampleValue(await scrape(), 'kb_rate_limit_rejections_total', { plan: 'starter' })).toBe(2);
  });
});

describe('metrics listeners', () => {
  it('the API port does not serve /metrics without a configured token', async () => {
    const plain = await startTestService({ stages: 'none', env: { KB_EMBEDDING_PROVIDER: 'local' } });
    try {
      const res = await plain.request('GET', '/metrics', { key: null });
      expect(res.status).toBe(404);
      expect(res.body.detail).toContain('KB_METRICS_TOKEN');
    } finally {
      await plain.close();
    }
  });

  it('a separate metrics port serves /metrics and health, with the token when one is set', async () => {
    const open = await startMetricsServer({
      config: { ...service.runtime.config, metrics: { token: null, host: '127.0.0.1', port: 0 } },
      metrics: service.runtime.metrics,
      services: service.runtime.services,
      port: 0,
    });
    const guarded = await startMetricsServer({
      config: service.runtime.config,
      metrics: service.runtime.metrics,
      services: service.runtime.services,
      port: 0,
    });
    try {
      const res = await fetch(`${open.url}/metrics`);
      expect(res.status).toBe(200);
      expect(sampleValue(parsePrometheusText(await res.text()), 'kb_documents', { status: 'completed' })).toBe(1);
      expect((await fetch(`${open.url}/health/ready`)).status).toBe(200);
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      const authorised = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(authorised.status).toBe(200);
    } finally {
      await open.close();
      await guarded.close();
    }
  });
});
