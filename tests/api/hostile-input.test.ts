import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/**
 * Malformed and hostile requests through real HTTP: each is a clear 4xx problem (never a 500),
 * with `X-Request-Id` even when the HTTP parser refuses the request before routing, and nothing
 * of it is left in the object store.
 */

const REQUEST_TIMEOUT_MS = 2000;
const MAX_UPLOADS = 2;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    stages: 'none',
    env: {
      KB_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      KB_MAX_CONCURRENT_UPLOADS: String(MAX_UPLOADS),
    },
  });
});

afterAll(async () => {
  await svc?.close();
});

const FILE_PART =
  '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n';

/** A fresh connection that writes `payload` once connected; `answer` is all the server sent, once it is closed. */
function openRaw(payload: string): { socket: net.Socket; answer: Promise<string> } {
  const { hostname, port } = new URL(svc.url);
  const socket = net.connect(Number(port), hostname, () => socket.write(payload));
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => {
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
    });
    socket.on('close', () => resolve(data));
  });
  return { socket, answer };
}

/** The raw HTTP response to `payload` written on a fresh connection (the server closes it). */
function rawExchange(payload: string, timeoutMs = 10_000): Promise<string> {
  const { socket, answer } = openRaw(payload);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  return answer.finally(() => clearTimeout(timer));
}

/** The head of an upload that declares 100,000 bytes and sends only the start of its file part. */
const unfinishedUpload = () =>
  'POST /api/v1/documents HTTP/1.1\r\nHost: x\r\n' +
  `X-API-Key: ${svc.keys.all}\r\nContent-Type: multipart/form-data; boundary=XYZ\r\n` +
  'Content-Length: 100000\r\n\r\n' +
  FILE_PART;

/** Parses a raw HTTP/1.1 response into the shape `expectProblem` checks. */
function parseRaw(raw: string): ApiResponse {
  const [head = '', text = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const status = Number(statusLine.split(' ')[1]);
  return { status, headers, text, body: text ? JSON.parse(text) : null };
}

/** The problem checks for a response written by the HTTP parser (no path is known: instance `/`). */
function expectRawProblem(raw: string, status: number, detail: RegExp): void {
  const res = parseRaw(raw);
  expect(res.status, raw.slice(0, 300)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const body = res.body as { type: string; detail: string };
  expect(body).toMatchObject({ status, trace_id: res.headers.get('x-request-id') });
  expect(body.type).toMatch(/\/errors\/bad-request$/);
  expect(body.detail).toMatch(detail);
}

async function uploads(): Promise<string[]> {
  return (await svc.storedObjects()).filter((name) => name.includes('upload') || name.endsWith('.tmp'));
}

describe('malformed multipart bodies are a 400', () => {
  it.each([
    ['a boundary that does not match the body', 'multipart/form-data; boundary=XYZ', '--ABC\r\nfoo\r\n'],
    ['no boundary at all', 'multipart/form-data', 'hello'],
    ['a body cut off in the file part', 'multipart/form-data; boundary=XYZ', `${FILE_PART}hello wor`],
  ])('%s', async (_, type, body) => {
    const res = await svc.request('POST', '/api/v1/documents', { headers: { 'content-type': type }, body });
    const problem = expectProblem(res, 400, 'bad-request');
    expect(problem.detail).toMatch(/multipart body is malformed/);
    expect(await uploads()).toEqual([]);
  });
});

describe('a multipart boundary longer than the parser takes is a 400', () => {
  const boundary = 'b'.repeat(253);
  const form =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n` +
    `hello\r\n--${boundary}--\r\n`;
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };

  it('on POST and on PUT, leaving nothing in storage', async () => {
    const created = await svc.request('POST', '/api/v1/documents', {
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: `${FILE_PART}hello\r\n--XYZ--\r\n`,
    });
    expect(created.status).toBe(201);
    const id = (created.body as { document_id: string }).document_id;
    const before = await uploads();
    for (const [method, path] of [
      ['POST', '/api/v1/documents'],
      ['PUT', `/api/v1/documents/${id}`],
    ] as const) {
      const res = await svc.request(method, path, { headers, body: form });
      const problem = expectProblem(res, 400, 'bad-request');
      expect(problem.detail, method).toMatch(/boundary/);
    }
    expect(await uploads()).toEqual(before);
    expect((await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`)).status).toBe(204);
  });
});

describe('prototype keys', () => {
  it('refuses __proto__ in a JSON body with a message that names it', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      headers: { 'content-type': 'application/json' },
      body: '{"query":"tide","filters":{"metadata":{"__proto__":{"polluted":true}}}}',
    });
    const problem = expectProblem(res, 422, 'validation-error');
    expect(problem.detail).toMatch(/"__proto__" key, which is refused/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses constructor.prototype in a JSON body', async () => {
    const res = await svc.request('PATCH', '/api/v1/documents/0190a5c4-8f5e-7a6b-9c3d-2e1f0a9b8c7d', {
      headers: { 'content-type': 'application/json' },
      body: '{"metadata":{"constructor":{"prototype":{"x":1}}}}',
    });
    expect(expectProblem(res, 422, 'validation-error').detail).toMatch(/"constructor.prototype" key/);
  });

  it('still calls broken JSON broken', async () => {
    const res = await svc.request('POST', '/api/v1/search', {
      headers: { 'content-type': 'application/json' },
      body: '{"query":',
    });
    expect(expectProblem(res, 400, 'bad-request').detail).toBe('The body is not valid JSON.');
  });
});

describe('errors raised before routing are problems with X-Request-Id', () => {
  it('answers bad framing with 400', async () => {
    const raw = await rawExchange('GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expectRawProblem(raw, 400, /not well-formed HTTP/);
  });

  it('answers a URL too long for the header limit with 431', async () => {
    const raw = await rawExchange(`GET /api/v1/documents?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectRawProblem(raw, 431, /exceed 64 KiB/);
  });

  it('answers a body that drips in too slowly with 408, and keeps no staged file', async () => {
    const started = Date.now();
    const { socket, answer } = openRaw(unfinishedUpload());
    const drip = setInterval(() => socket.writable && socket.write('a'), 200);
    setTimeout(() => socket.destroy(), 20_000);
    const raw = await answer.finally(() => clearInterval(drip));
    expect(Date.now() - started).toBeLessThan(10_000);
    expectRawProblem(raw, 408, new RegExp(`within ${REQUEST_TIMEOUT_MS} ms`));
    await new Promise((r) => setTimeout(r, 300));
    expect(await uploads()).toEqual([]);
  }, 30_000);
});

describe('concurrent uploads per key', () => {
  it('answers 429 beyond the limit while earlier uploads are still arriving, and accepts again after', async () => {
    const slow = Array.from({ length: MAX_UPLOADS }, () => openRaw(unfinishedUpload()).socket);
    await new Promise((r) => setTimeout(r, 500));
    try {
      const refused = await svc.upload('third.txt', 'A third note while two are still arriving.');
      const problem = expectProblem(refused, 429, 'rate-limit-exceeded');
      expect(problem.detail).toMatch(new RegExp(`at most ${MAX_UPLOADS} may run at once`));
      expect(refused.headers.get('retry-after')).toBe('1');
      // Another key is not affected.
      const other = await svc.upload('other.txt', 'A note from another workspace.', { key: svc.keys.otherWorkspace });
      expect(other.status, other.text).toBe(201);
    } finally {
      for (const socket of slow) socket.destroy();
    }
    await new Promise((r) => setTimeout(r, 300));
    const again = await svc.upload('fourth.txt', 'Accepted once the slow uploads are gone.');
    expect(again.status, again.text).toBe(201);
  });
});

describe('storage_url', () => {
  it('names the object in the store, never a path of the server', async () => {
    const res = await svc.upload('where.txt', 'Where is this file kept?');
    expect(res.status, res.text).toBe(201);
    expect(res.body.storage_url).toMatch(
      /^kb:\/\/workspaces\/[^/]+\/documents\/[0-9a-f-]{36}\/uploads\/[0-9a-f-]{36}$/,
    );
    expect(res.body.storage_url).not.toContain(svc.dataDir);
    const doc = await svc.request('GET', `/api/v1/documents/${res.body.document_id}`);
    expect(doc.body.storage_url).toBe(res.body.storage_url);
  });
});
