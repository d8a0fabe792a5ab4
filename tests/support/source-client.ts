/**
 * Sources of synchronisation through the API: create one, run a sync and wait for its end, and
 * write the files of a folder source.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunView } from '../../core/model/source-views.model.ts';
import { parseBody, type TestClient, testClient } from './test-client.ts';

/** A client of a service in another process, every request with `key` (an `enterprise` key avoids 429s while polling). */
export function fetchClient(url: string, key: string): TestClient {
  const keys = { all: key, read: key, search: key, write: key, otherWorkspace: key };
  return testClient(async (method, pathname, opts = {}) => {
    const k = opts.key === undefined ? key : opts.key;
    const headers: Record<string, string> = { ...opts.headers, ...(k ? { 'X-API-Key': k } : {}) };
    if (opts.json !== undefined) headers['content-type'] = 'application/json';
    const body = opts.json !== undefined ? JSON.stringify(opts.json) : opts.body;
    const res = await fetch(`${url}${pathname}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: parseBody(res.headers.get('content-type') ?? '', text),
      text,
    };
  }, keys);
}

/** Starts a sync of `sourceId` (202 expected) and polls its run until it ends. */
export async function syncAndWait(
  client: TestClient,
  sourceId: string,
  options: { query?: string; key?: string; timeoutMs?: number } = {},
): Promise<RunView> {
  const started = await client.request('POST', `/api/v1/sources/${sourceId}/sync${options.query ?? ''}`, {
    ...(options.key ? { key: options.key } : {}),
  });
  if (started.status !== 202) throw new Error(`sync answered ${started.status}: ${started.text}`);
  return waitForRun(client, sourceId, started.body.run_id, options);
}

/** Polls a run until it is no longer `running`. */
export async function waitForRun(
  client: TestClient,
  sourceId: string,
  runId: string,
  options: { key?: string; timeoutMs?: number } = {},
): Promise<RunView> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const res = await client.request<RunView>('GET', `/api/v1/sources/${sourceId}/runs/${runId}`, {
      ...(options.key ? { key: options.key } : {}),
    });
    if (res.status !== 200) throw new Error(`GET run answered ${res.status}: ${res.text}`);
    if (res.body.status !== 'running') return res.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still running: ${JSON.stringify(res.body.counts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Writes `files` (relative path → content) under `dir`, with a modification time `mtimeOffsetS`
 * seconds from now, so that a rewrite within the same second still shows a new mtime.
 */
export async function writeFiles(dir: string, files: Record<string, string>, mtimeOffsetS = 0): Promise<void> {
  const at = new Date(Date.now() + mtimeOffsetS * 1000);
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    await utimes(file, at, at);
  }
}

/** A short Markdown page about `topic`, with a word unique to it (for keyword search). */
export function page(topic: string, detail = 'the first edition'): string {
  return `# ${topic}\n\nThis page is about ${topic}: ${detail}.\n`;
}
