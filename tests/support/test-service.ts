/**
 * The real service for API tests: the embedded runtime on a temporary data directory, the HTTP
 * API listening on a free loopback port, and keys created through the keys service.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProblemBody } from '../../apps/api/plugins/problem.plugin.ts';
import { startServer } from '../../apps/api/server.ts';
import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import {
  type ApiResponse,
  openTestApi,
  parseBody,
  requestHeaders,
  type TestApi,
  type TestClient,
  type TestKeys,
  type TestRuntimeOptions,
} from './test-client.ts';

export type { ApiResponse, RequestOptions, TestKeys, UploadOptions } from './test-client.ts';

/** Stages default to `all`: uploads get ingested. */
export interface TestServiceOptions extends TestRuntimeOptions {
  /** Embedding provider to use instead of the configured one (stays the caller's to close). */
  readonly embeddings?: EmbeddingProvider;
  /**
   * Data directory to use (e.g. one an earlier service left); it is kept on `close`. Default: a
   * fresh temporary directory, removed on `close`.
   */
  readonly dataDir?: string;
  /** Folder of the built dashboard to serve (default: the real build). */
  readonly dashboardDir?: string;
  /** Run the webhook dispatcher in the service (as `kb serve` does); off by default. */
  readonly dispatchWebhooks?: boolean;
}

export type TestService = TestApi;

/** Starts the embedded runtime and the API on a free port, with a key for each role. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'kb-api-test-')));
  return openTestApi({
    dataDir,
    removeDir: () => (ownDir ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve()),
    ...(options.env === undefined ? {} : { env: options.env }),
    runtime: {
      stages: options.stages ?? 'all',
      ...(options.embeddings ? { embeddings: options.embeddings } : {}),
      ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
      dispatchWebhooks: options.dispatchWebhooks ?? false,
      // As `kb serve`: what an earlier process left pending is published at start-up.
      drainNotifications: true,
    },
    async serve(config, rt) {
      const server = await startServer({
        config,
        services: rt.services,
        version: rt.version,
        metrics: rt.metrics,
        logger: false,
        ...(options.dashboardDir === undefined ? {} : { dashboardDir: options.dashboardDir }),
      });
      const transport =
        (keys: TestKeys): TestClient['request'] =>
        async (method, pathname, opts = {}) => {
          const headers = requestHeaders(opts, keys);
          const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
          const res = await fetch(`${server.url}${pathname}`, {
            method,
            headers,
            ...(body !== undefined ? { body } : {}),
          });
          const text = await res.text();
          return {
            status: res.status,
            headers: res.headers,
            body: parseBody(res.headers.get('content-type') ?? '', text),
            text,
          };
        };
      return { app: server.app, url: server.url, transport, close: () => server.close() };
    },
  });
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Checks an RFC 7807 response: status, `application/problem+json`, the kind at the end of
 * `type`, every member, `trace_id` equal to `X-Request-Id`. Returns the body for further checks.
 */
export function expectProblem(res: ApiResponse, status: number, kind: string): ProblemBody {
  const describe = `${res.status} ${res.text.slice(0, 500)}`;
  if (res.status !== status) throw new Error(`expected ${status} ${kind}, got ${describe}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/problem+json')) throw new Error(`not problem+json (${type}): ${describe}`);
  const body = res.body as ReturnType<typeof expectProblem>;
  const fail = (what: string) => {
    throw new Error(`problem ${what}: ${describe}`);
  };
  if (typeof body.type !== 'string' || !body.type.endsWith(`/errors/${kind}`)) fail(`type is not …/errors/${kind}`);
  if (body.status !== status) fail('status member differs');
  if (typeof body.title !== 'string' || body.title === '') fail('has no title');
  if (typeof body.detail !== 'string' || body.detail === '') fail('has no detail');
  if (typeof body.instance !== 'string' || !body.instance.startsWith('/')) fail('has no instance path');
  if (!UUID_RE.test(body.trace_id)) fail('trace_id is not a UUID');
  if (res.headers.get('x-request-id') !== body.trace_id) fail('trace_id differs from X-Request-Id');
  if (Number.isNaN(Date.parse(body.timestamp))) fail('timestamp is not a date');
  return body;
}

const TOPICS = ['glaciers', 'volcanoes', 'coral reefs', 'deserts', 'rainforests', 'tundra', 'estuaries', 'savannas'];

/**
 * A markdown document long enough for several chunks: one section per topic. `edits` replaces
 * the text of the sections at the given positions (for version diffs).
 */
export function sectionedDocument(edits: Readonly<Record<number, string>> = {}): string {
  return TOPICS.map((topic, i) => {
    const sentences = Array.from(
      { length: 28 },
      (_, j) =>
        `Field note ${i}.${j}: researchers studying ${topic} recorded observation ${j} about ${topic} ecology, climate and geology in region ${i}.`,
    );
    return `## ${topic}\n\n${edits[i] ?? sentences.join(' ')}`;
  }).join('\n\n');
}
