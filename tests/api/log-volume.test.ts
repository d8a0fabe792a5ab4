import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-test-app.ts';

/**
 * A flood the rate limiter stops must not fill the disk with log lines: refusals of one key are
 * logged once per window with their count, and other 4xx answers are sampled.
 */
let svc: TestApp;
const lines: string[] = [];

beforeAll(async () => {
  svc = await buildTestApp({ logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } });
});
afterAll(async () => {
  await svc?.close();
});

const logBytes = () => lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);

describe('the log under a flood of refused requests', () => {
  it('writes at most 1 KB per 1,000 rate-limited requests, naming the key once', async () => {
    const { key, id } = await svc.createKey({ permissions: ['read'], plan: 'starter' });
    for (let i = 0; i < 100; i++) {
      expect((await svc.request('GET', '/api/v1/documents?limit=1', { key })).status).toBe(200);
    }
    lines.length = 0;
    for (let i = 0; i < 2000; i++) {
      expect((await svc.request('GET', '/api/v1/documents?limit=1', { key })).status).toBe(429);
    }
    expect(logBytes()).toBeLessThanOrEqual(2 * 1024);
    const aboutKey = lines.filter((line) => line.includes(id));
    expect(aboutKey).toHaveLength(1);
    expect(JSON.parse(aboutKey[0] as string)).toMatchObject({ key_id: id, status: 429 });
  });

  it('samples other 4xx answers instead of writing a line for each', async () => {
    lines.length = 0;
    for (let i = 0; i < 2000; i++) {
      const res = await svc.request('GET', '/api/v1/documents', { key: 'ink_notavalidkeynotavalidkeynotavalid00' });
      expect(res.status).toBe(401);
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(logBytes()).toBeLessThanOrEqual(2 * 1024);
  });

  it('still logs every answered request that is not a 4xx', async () => {
    lines.length = 0;
    for (let i = 0; i < 20; i++) expect((await svc.request('GET', '/api/v1/documents?limit=1')).status).toBe(200);
    const completed = lines.map((line) => JSON.parse(line)).filter((l) => l.msg === 'request completed');
    expect(completed.filter((l) => l.res.statusCode === 200)).toHaveLength(20);
  });
});
