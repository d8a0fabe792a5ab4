/**
 * The API without a port, for tests that need no socket: the app built over the embedded runtime
 * in a fresh temporary data directory, reached with Fastify's `inject`. Requests and uploads take
 * the same options and answer the same {@link ApiResponse} as `startTestService`'s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../apps/api/app.ts';
import {
  openTestApi,
  parseBody,
  type RequestOptions,
  requestHeaders,
  type TestApi,
  type TestClient,
  type TestKeys,
  type TestRuntimeOptions,
} from './test-client.ts';

/** Stages default to `none`: uploads stay `pending`. `logger`: the app's log (none by default). */
export type TestAppOptions = TestRuntimeOptions & { readonly logger?: object };

/**
 * The built app, ready for `inject` (it listens on no port); `url` is the origin requests are
 * addressed to (their Host), where nothing listens; `close` closes the app and the runtime and
 * removes the data directory.
 */
export type TestApp = TestApi;

/** The Host of every request, so links the API derives from it are predictable. */
const TEST_HOST = 'kb.test';

/**
 * A request body as `fetch` would send it: the bytes, and the content type `fetch` derives from
 * the body (a multipart boundary for FormData, text/plain for a string) unless one is given.
 */
async function encodeBody(
  opts: RequestOptions,
  headers: Record<string, string>,
): Promise<{ payload?: Buffer; headers: Record<string, string> }> {
  const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
  if (body === undefined || body === null) return { headers };
  const encoded = new Request('http://localhost/', { method: 'POST', body });
  const payload = Buffer.from(await encoded.arrayBuffer());
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  const derived = encoded.headers.get('content-type');
  return { payload, headers: hasType || derived === null ? headers : { ...headers, 'content-type': derived } };
}

function toHeaders(raw: Record<string, string | string[] | number | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return headers;
}

/** Builds the app over the embedded runtime in a fresh temporary directory, with a key for each role. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kb-app-test-'));
  return openTestApi({
    dataDir,
    removeDir: () => rm(dataDir, { recursive: true, force: true }),
    ...(options.env === undefined ? {} : { env: options.env }),
    runtime: {
      stages: options.stages ?? 'none',
      ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    },
    async serve(config, rt) {
      const app = await buildApp({
        config,
        services: rt.services,
        version: rt.version,
        metrics: rt.metrics,
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
      try {
        await app.ready();
      } catch (error) {
        await app.close();
        throw error;
      }
      const transport =
        (keys: TestKeys): TestClient['request'] =>
        async (method, pathname, opts = {}) => {
          const encoded = await encodeBody(opts, {
            host: TEST_HOST,
            accept: '*/*',
            ...requestHeaders(opts, keys),
          });
          const res = await app.inject({
            method: method as 'GET',
            url: pathname,
            headers: encoded.headers,
            ...(encoded.payload === undefined ? {} : { payload: encoded.payload }),
          });
          const headers = toHeaders(res.headers);
          return {
            status: res.statusCode,
            headers,
            body: parseBody(headers.get('content-type') ?? '', res.body),
            text: res.body,
          };
        };
      return { app, url: `http://${TEST_HOST}`, transport, close: () => app.close() };
    },
  });
}
