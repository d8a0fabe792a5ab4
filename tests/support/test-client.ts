/**
 * What the API test helpers share, however they reach the app (a real port or `inject`): the
 * configuration of a test runtime, a key per role, and the upload and polling built on `request`.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Config, configFrom } from '../../core/config/config.ts';
import type { StageName } from '../../core/events/events.ts';
import type { Permission, Plan } from '../../core/model/account-records.model.ts';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import type { OutboundResolver } from '../../core/outbound/outbound-policy.ts';
import { createRuntime, type Runtime } from '../../core/runtime/runtime.ts';

export interface TestKeys {
  /** read, search and write, workspace A. */
  readonly all: string;
  readonly read: string;
  readonly search: string;
  readonly write: string;
  /** read, search and write, another workspace. */
  readonly otherWorkspace: string;
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

/** A workspace with a key for each role, and a way to make more keys. */
export interface TestWorkspaces {
  readonly workspaceId: string;
  readonly otherWorkspaceId: string;
  readonly keys: TestKeys;
  /** Creates another key in the main workspace (or `workspaceId`); returns the key and its id. */
  createKey(input: {
    permissions: readonly Permission[];
    plan?: Plan;
    workspaceId?: string;
  }): Promise<{ key: string; id: string }>;
}

/** Requests to the API, by whatever transport. */
export interface TestClient {
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
}

/** How a test runtime is set up. */
export interface TestRuntimeOptions {
  /** Stages running in the process (the default depends on the helper). */
  readonly stages?: 'all' | 'none' | readonly StageName[];
  /** Extra configuration variables. */
  readonly env?: Parameters<typeof configFrom>[0];
  /** How the service's own requests resolve host names (default: the system resolver). */
  readonly resolveHost?: OutboundResolver;
}

/** The API over a test runtime, however it is reached, with a key for each role. */
export interface TestApi extends TestWorkspaces, TestClient {
  readonly app: FastifyInstance;
  /** The origin requests are addressed to. */
  readonly url: string;
  readonly runtime: Runtime;
  readonly dataDir: string;
  /** Files under the data directory's object store (relative paths). */
  storedObjects(): Promise<string[]>;
  close(): Promise<void>;
}

/** The API a test helper serves over a runtime: the app, its origin, its transport and how to stop it. */
export interface ServedApi {
  readonly app: FastifyInstance;
  readonly url: string;
  /** Requests to the API that send `keys.all` unless told otherwise. */
  transport(keys: TestKeys): TestClient['request'];
  close(): Promise<void>;
}

/**
 * Opens a test runtime on `dataDir` (configuration `env`, runtime options `runtime`), the API over
 * it with `serve`, and the test workspaces. Closing the result, or a failure on the way, closes
 * what was opened and then calls `removeDir`.
 */
export async function openTestApi(options: {
  readonly dataDir: string;
  removeDir(): Promise<void>;
  readonly env?: Parameters<typeof configFrom>[0];
  readonly runtime: Parameters<typeof createRuntime>[1];
  serve(config: Config, runtime: Runtime): Promise<ServedApi>;
}): Promise<TestApi> {
  const { dataDir, removeDir } = options;
  const config = testConfig(dataDir, options.env);
  let runtime: Runtime | undefined;
  let served: ServedApi | undefined;
  try {
    runtime = await createRuntime(config, options.runtime);
    served = await options.serve(config, runtime);
    const workspaces = await createTestWorkspaces(runtime);
    const [rt, api] = [runtime, served];
    return {
      app: api.app,
      url: api.url,
      runtime: rt,
      dataDir,
      ...workspaces,
      ...testClient(api.transport(workspaces.keys), workspaces.keys),
      storedObjects: () => listFiles(path.join(dataDir, 'objects')),
      async close() {
        await api.close();
        await rt.close();
        await removeDir();
      },
    };
  } catch (error) {
    await served?.close();
    await runtime?.close();
    await removeDir();
    throw error;
  }
}

/** The configuration of a test runtime on `dataDir`, with `env` on top. */
export function testConfig(dataDir: string, env: Parameters<typeof configFrom>[0] = {}): Config {
  return configFrom({
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
    ...env,
  });
}

const randomWorkspace = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

/** Two fresh workspaces and the keys of every role (created through the keys service). */
export async function createTestWorkspaces(runtime: Runtime): Promise<TestWorkspaces> {
  const workspaceId = randomWorkspace('ws');
  const otherWorkspaceId = randomWorkspace('other');
  const createKey: TestWorkspaces['createKey'] = async (input) => {
    const created = await runtime.services.keys.create({
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
    otherWorkspace: (await createKey({ permissions: ['read', 'search', 'write'], workspaceId: otherWorkspaceId })).key,
  };
  return { workspaceId, otherWorkspaceId, keys, createKey };
}

/** Upload and polling over `request`, which sends `keys.all` unless told otherwise. */
export function testClient(request: TestClient['request'], keys: TestKeys): TestClient {
  const upload: TestClient['upload'] = (name, content, opts = {}) => {
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

  const waitForStatus: TestClient['waitForStatus'] = async (id, status, opts = {}) => {
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

  return { request, upload, waitForStatus };
}

/** The headers of a request: the caller's, with the API key (`keys.all` unless told otherwise). */
export function requestHeaders(opts: RequestOptions, keys: TestKeys): Record<string, string> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? keys.all : opts.key;
  if (key !== null) headers['x-api-key'] = key;
  if (opts.json !== undefined) headers['content-type'] ??= 'application/json';
  return headers;
}

/** A response body as the tests read it: parsed when it is JSON (problem+json too), else the text. */
export function parseBody<T>(contentType: string, text: string): T {
  return (contentType.includes('json') && text ? JSON.parse(text) : text) as T;
}

/** Files under `dir` (relative paths); none when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
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
