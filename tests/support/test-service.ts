/**
 * The real service for API tests: the embedded runtime on a temporary data directory, the HTTP
 * API listening on a free loopback port, and keys created through the keys service.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ProblemBody } from '../../apps/api/plugins/problem.plugin.ts';
import { startServer } from '../../apps/api/server.ts';
import { configFrom } from '../../pipeline/config/config.ts';
import type { StageName } from '../../pipeline/events/events.ts';
import type { Permission, Plan } from '../../pipeline/model/control-records.model.ts';
import type { EmbeddingProvider } from '../../pipeline/ports/embedding/embedding.port.ts';
import { createRuntime, type Runtime } from '../../pipeline/runtime/runtime.ts';
import type { DocumentView } from '../../pipeline/services/views.ts';

export interface TestKeys {
  /** read, search and write, workspace A. */
  readonly all: string;
  readonly read: string;
  readonly search: string;
  readonly write: string;
  /** read, search and write, another workspace. */
  readonly otherWorkspace: string;
}

export interface TestServiceOptions {
  /** Stages running in the process (default `all`: uploads get ingested). */
  readonly stages?: 'all' | 'none' | readonly StageName[];
  /** Extra configuration variables. */
  readonly env?: Parameters<typeof configFrom>[0];
  /** Embedding provider to use instead of the configured one (stays the caller's to close). */
  readonly embeddings?: EmbeddingProvider;
  /**
   * Data directory to use (e.g. one an earlier service left); it is kept on `close`. Default: a
   * fresh temporary directory, removed on `close`.
   */
  readonly dataDir?: string;
  /** Folder of the built dashboard to serve (default: the real build). */
  readonly dashboardDir?: string;
}

export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

export interface RequestOptions {
  /** API key sent as X-API-Key; `null` sends none. Default: `keys.all`. */
  readonly key?: string | null;
  readonly json?: unknown;
  readonly body?: RequestInit['body'];
  readonly headers?: Record<string, string>;
}

export interface UploadOptions {
  readonly metadata?: unknown;
  readonly source?: string;
  readonly changeReason?: string;
  /** The part's declared MIME type (default text/plain). */
  readonly type?: string;
  readonly key?: string;
  /** PUT to this document instead of POST. */
  readonly documentId?: string;
}

export interface TestService {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly runtime: Runtime;
  readonly dataDir: string;
  readonly workspaceId: string;
  readonly otherWorkspaceId: string;
  readonly keys: TestKeys;
  /** Creates another key in the main workspace (or `workspaceId`); returns the key and its id. */
  createKey(input: {
    permissions: readonly Permission[];
    plan?: Plan;
    workspaceId?: string;
  }): Promise<{ key: string; id: string }>;
  /** Any request to the API; JSON bodies are parsed (problem+json too). */
  // biome-ignore lint/suspicious/noExplicitAny: the parsed JSON of any endpoint, narrowed by each test
  request<T = any>(method: string, pathname: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Multipart upload (POST /api/v1/documents, or PUT when `documentId` is given). */
  // biome-ignore lint/suspicious/noExplicitAny: as for `request`
  upload<T = any>(name: string, content: string | Uint8Array, options?: UploadOptions): Promise<ApiResponse<T>>;
  /** Polls GET /documents/:id until `status`; throws on timeout or on `failed` when waiting for another status. */
  waitForStatus(
    id: string,
    status: DocumentView['status'],
    options?: { timeoutMs?: number; key?: string },
  ): Promise<DocumentView>;
  /** Files under the data directory's object store (relative paths). */
  storedObjects(): Promise<string[]>;
  close(): Promise<void>;
}

const randomWorkspace = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

async function listFiles(dir: string): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)));
}

/** Starts the embedded runtime and the API on a free port, with a key for each role. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'kb-api-test-')));
  const removeDir = () => (ownDir ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve());
  const config = configFrom({
    KB_DATA_DIR: dataDir,
    KB_BOOTSTRAP_KEY: 'false',
    KB_LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    KB_KEY_CACHE_MS: '0',
    KB_PARSE_THREADS: '1',
    KB_OCR: 'false',
    KB_RETRY_BASE_MS: '20',
    KB_RETRY_MAX_MS: '200',
    ...options.env,
  });
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime(config, {
      stages: options.stages ?? 'all',
      ...(options.embeddings ? { embeddings: options.embeddings } : {}),
    });
    const rt = runtime;
    const server = await startServer({
      config,
      services: rt.services,
      version: rt.version,
      metrics: rt.metrics,
      logger: false,
      ...(options.dashboardDir === undefined ? {} : { dashboardDir: options.dashboardDir }),
    });

    const workspaceId = randomWorkspace('ws');
    const otherWorkspaceId = randomWorkspace('other');
    const createKey: TestService['createKey'] = async (input) => {
      const created = await rt.services.keys.create({
        workspaceId: input.workspaceId ?? workspaceId,
        name: `test-${input.permissions.join('-')}`,
        permissions: input.permissions,
        plan: input.plan ?? 'enterprise',
      });
      return { key: created.key, id: created.record.id };
    };
    const keys: TestKeys = {
      all: (await createKey({ permissions: ['read', 'search', 'write'] })).key,
      read: (await createKey({ permissions: ['read'] })).key,
      search: (await createKey({ permissions: ['search'] })).key,
      write: (await createKey({ permissions: ['write'] })).key,
      otherWorkspace: (await createKey({ permissions: ['read', 'search', 'write'], workspaceId: otherWorkspaceId }))
        .key,
    };

    const request: TestService['request'] = async (method, pathname, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      const key = opts.key === undefined ? keys.all : opts.key;
      if (key !== null) headers['x-api-key'] = key;
      let body = opts.body;
      if (opts.json !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = JSON.stringify(opts.json);
      }
      const res = await fetch(`${server.url}${pathname}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      const parsed = type.includes('json') && text ? JSON.parse(text) : text;
      return { status: res.status, headers: res.headers, body: parsed, text };
    };

    const upload: TestService['upload'] = (name, content, opts = {}) => {
      const form = new FormData();
      if (opts.metadata !== undefined) {
        form.append('metadata', typeof opts.metadata === 'string' ? opts.metadata : JSON.stringify(opts.metadata));
      }
      if (opts.source !== undefined) form.append('source', opts.source);
      if (opts.changeReason !== undefined) form.append('change_reason', opts.changeReason);
      form.append('file', new Blob([content], { type: opts.type ?? 'text/plain' }), name);
      const target = opts.documentId ? `/api/v1/documents/${opts.documentId}` : '/api/v1/documents';
      return request(opts.documentId ? 'PUT' : 'POST', target, { body: form, key: opts.key ?? keys.all });
    };

    const waitForStatus: TestService['waitForStatus'] = async (id, status, opts = {}) => {
      const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
      let last: DocumentView | undefined;
      while (Date.now() < deadline) {
        const res = await request<DocumentView>('GET', `/api/v1/documents/${id}`, { key: opts.key ?? keys.all });
        if (res.status !== 200) throw new Error(`GET document ${id} answered ${res.status}: ${res.text}`);
        last = res.body;
        if (last.status === status) return last;
        if (last.status === 'failed' && status !== 'failed') {
          throw new Error(`document ${id} failed: ${JSON.stringify(last.error)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`document ${id} did not reach ${status}; last status ${last?.status}`);
    };

    return {
      app: server.app,
      url: server.url,
      runtime: rt,
      dataDir,
      workspaceId,
      otherWorkspaceId,
      keys,
      createKey,
      request,
      upload,
      waitForStatus,
      storedObjects: () => listFiles(path.join(dataDir, 'objects')),
      async close() {
        await server.close();
        await rt.close();
        await removeDir();
      },
    };
  } catch (error) {
    await runtime?.close();
    await removeDir();
    throw error;
  }
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
