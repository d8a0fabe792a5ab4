import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Texts with no whitespace at all, through the API: chunking is linear, cuts long unbroken runs at
 * the token limit, runs off the event loop, and a document over the chunk cap fails with
 * `content-too-large` at the chunk stage, before anything is embedded.
 */

const MAX_CHUNKS = 1000;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    env: { KB_MAX_CHUNKS: String(MAX_CHUNKS), KB_EMBEDDING_PROVIDER: 'local', KB_PARSE_TIMEOUT_MS: '120000' },
  });
}, 60_000);

afterAll(async () => {
  await svc?.close();
});

/** `bytes` of base64 (letters, digits, `+` and `/`) on one line, the same every run. */
function base64Line(bytes: number): string {
  const raw = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  let x = 0x9e3779b9;
  for (let i = 0; i < raw.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    raw[i] = x >>> 24;
  }
  return raw.toString('base64').slice(0, bytes);
}

describe('text without whitespace', () => {
  it('fails 50 MB of one letter with content-too-large at the chunk stage, not a stack overflow', async () => {
    const res = await svc.upload('run.txt', 'a'.repeat(50_000_000));
    expect(res.status, res.text).toBe(201);
    const doc = await svc.waitForStatus(res.body.document_id, 'failed', { timeoutMs: 180_000 });
    expect(doc.error).toMatchObject({ code: 'content-too-large', stage: 'chunk', attempts: 1 });
    expect(doc.error?.message).toMatch(new RegExp(`makes \\d+ chunks .*at most ${MAX_CHUNKS} chunks`));
    expect(doc.stats).toEqual({ chunks: 0, tokens: 0 });
  }, 240_000);

  it('chunks 1.5 MB of single-line base64 while the service keeps answering at once', async () => {
    const res = await svc.upload('blob.txt', base64Line(1_500_000));
    expect(res.status, res.text).toBe(201);
    const id = res.body.document_id as string;
    let slowest = 0;
    let samples = 0;
    let doc = (await svc.request('GET', `/api/v1/documents/${id}`)).body;
    while (doc.status === 'pending' || doc.status === 'processing') {
      const started = performance.now();
      const live = await fetch(`${svc.url}/health/live`);
      slowest = Math.max(slowest, performance.now() - started);
      samples += 1;
      expect(live.status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
      doc = (await svc.request('GET', `/api/v1/documents/${id}`)).body;
    }
    // Over the cap: 1.5 MB of base64 makes thousands of chunks of at most 512 tokens.
    expect(doc.error).toMatchObject({ code: 'content-too-large', stage: 'chunk' });
    expect(samples).toBeGreaterThan(5);
    // Chunking takes seconds; on the event loop it would hold every request that long.
    expect(slowest).toBeLessThan(1000);
  }, 120_000);

  it('cuts a long unbroken run at the token limit', async () => {
    const res = await svc.upload('short-blob.txt', base64Line(20_000));
    expect(res.status, res.text).toBe(201);
    const doc = await svc.waitForStatus(res.body.document_id, 'completed', { timeoutMs: 60_000 });
    expect(doc.stats.chunks).toBeGreaterThan(1);
    const chunks = await svc.request('GET', `/api/v1/chunks/${doc.document_id}?limit=100`);
    expect(chunks.status).toBe(200);
    for (const chunk of chunks.body.chunks as Array<{ tokens: number }>) expect(chunk.tokens).toBeLessThanOrEqual(512);
  }, 90_000);
});
