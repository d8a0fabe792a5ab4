import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type RunningServer, startServer } from '../../apps/api/server.ts';
import { type Config, loadConfig } from '../../core/config/config.ts';
import { createRuntime, type Runtime } from '../../core/runtime/runtime.ts';

export interface SearchOptions {
  readonly mode: 'hybrid' | 'semantic' | 'keyword';
  readonly limit: number;
  readonly weights?: { readonly keyword: number; readonly semantic: number };
}

/** The embedded service on a temporary data directory, reached through its HTTP API only. */
export interface EvalService {
  readonly config: Config;
  readonly runtime: Runtime;
  /** POST /documents; resolves the new document's id. */
  upload(name: string, text: string, metadata: Record<string, unknown>): Promise<string>;
  /** Counts of the workspace's documents by status. */
  counts(): Promise<{ completed: number; failed: number }>;
  /** Every completed document's id with its metadata `beir_id`. */
  listBeirIds(): Promise<Map<string, string>>;
  /** POST /search with `group_by: document`: document ids, best first, and the request's milliseconds. */
  search(query: string, options: SearchOptions): Promise<{ documentIds: string[]; ms: number }>;
  close(): Promise<void>;
}

/**
 * Starts the embedded runtime with every stage and the API on a free loopback port, configured from
 * the environment (so `KB_EMBEDDING_PROVIDER` and friends choose the model) but with its own data.
 */
export async function startEvalService(keptDataDir: string | null): Promise<EvalService> {
  const dataDir = keptDataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'kb-eval-')));
  const removeDir = () => (keptDataDir === null ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve());
  const config = loadConfig({
    ...process.env,
    KB_DATA_DIR: dataDir,
    KB_BOOTSTRAP_KEY: 'false',
    KB_LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    KB_OCR: 'false',
  });
  let runtime: Runtime | undefined;
  let server: RunningServer | undefined;
  try {
    runtime = await createRuntime(config, { stages: 'all' });
    server = await startServer({ config, services: runtime.services, version: runtime.version, logger: false });
  } catch (error) {
    await runtime?.close();
    await removeDir();
    throw error;
  }
  const rt = runtime;
  const srv = server;
  const { key } = await rt.services.keys.create({
    workspaceId: 'eval',
    name: 'eval',
    permissions: ['read', 'search', 'write'],
    plan: 'enterprise',
  });
  const call = async <T>(method: string, pathname: string, body?: FormData | object): Promise<T> => {
    const headers: Record<string, string> = { 'x-api-key': key };
    let payload: FormData | string | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    // Like any client: a 429 or 503 (the ingestion backlog at its bound) is sent again after Retry-After.
    let res = await fetch(`${srv.url}${pathname}`, { method, headers, ...(payload ? { body: payload } : {}) });
    for (let attempt = 0; (res.status === 429 || res.status === 503) && attempt < 1000; attempt++) {
      const seconds = Math.min(60, Math.max(1, Number(res.headers.get('retry-after')) || 1));
      await res.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      res = await fetch(`${srv.url}${pathname}`, { method, headers, ...(payload ? { body: payload } : {}) });
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${pathname} answered ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const total = async (status: string) =>
    (await call<{ total: number }>('GET', `/api/v1/documents?status=${status}&page=1&page_size=1`)).total;

  return {
    config,
    runtime: rt,
    async upload(name, text, metadata) {
      const form = new FormData();
      form.append('metadata', JSON.stringify(metadata));
      form.append('file', new Blob([text], { type: 'text/plain' }), name);
      return (await call<{ document_id: string }>('POST', '/api/v1/documents', form)).document_id;
    },
    async listBeirIds() {
      const ids = new Map<string, string>();
      let cursor: string | null = null;
      do {
        const page: {
          documents: Array<{ id: string; metadata: Record<string, unknown> }>;
          pagination: { next_cursor: string | null };
        } = await call(
          'GET',
          `/api/v1/documents?status=completed&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        for (const doc of page.documents) ids.set(doc.id, String(doc.metadata.beir_id));
        cursor = page.pagination.next_cursor;
      } while (cursor);
      return ids;
    },
    async counts() {
      return { completed: await total('completed'), failed: await total('failed') };
    },
    async search(query, options) {
      const started = performance.now();
      const body = await call<{ results: Array<{ document_id: string }> }>('POST', '/api/v1/search', {
        query,
        mode: options.mode,
        limit: options.limit,
        group_by: 'document',
        ...(options.weights ? { weights: options.weights } : {}),
      });
      return { documentIds: body.results.map((r) => r.document_id), ms: performance.now() - started };
    },
    async close() {
      await srv.close();
      await rt.close();
      await removeDir();
    },
  };
}
