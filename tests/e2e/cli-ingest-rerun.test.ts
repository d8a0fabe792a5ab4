/**
 * `kb ingest` run again over the same folder: unchanged files are skipped, changed ones become new
 * versions of their documents, new ones new documents; files are told apart by their path within
 * the folder; a retried upload whose answer was lost creates one document.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createKey, KB_BIN, REPO_ROOT, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

const run = promisify(execFile);

interface RunReport {
  skipped: number;
  created: number;
  updated: number;
  failed: number;
  uploaded: Array<{ file: string; source: string; source_item: string; document_id: string; version: number }>;
  failures: Array<{ file: string; reason: string }>;
}

interface Listed {
  id: string;
  name: string;
  source: string;
  source_item: string | null;
  version: number;
}

describe('kb ingest, run again', { timeout: 180_000 }, () => {
  const cleanups = cleanupsAfterAll();

  async function serve(prefix: string) {
    const data = await tempDir(prefix);
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: path.join(data.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
    const { key } = await createKey(env, { workspace: 'rerun', name: 'loader', permissions: 'read,write' });
    const server = await startChild(['serve'], env);
    cleanups.push(() => stopChild(server));
    return { data, env, key, server };
  }

  async function ingest(args: string[], env: Record<string, string>): Promise<RunReport> {
    try {
      const { stdout } = await run(process.execPath, [KB_BIN, 'ingest', ...args, '--json'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env },
      });
      return JSON.parse(stdout) as RunReport;
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`kb ingest failed: ${e.message}\n${e.stdout}\n${e.stderr}`);
    }
  }

  async function listed(url: string, key: string): Promise<Listed[]> {
    const response = await fetch(`${url}/api/v1/documents?limit=100`, { headers: { 'X-API-Key': key } });
    const body = (await response.json()) as { documents: Listed[] };
    return body.documents.sort((a, b) => a.name.localeCompare(b.name));
  }

  it('creates nothing the second time, then updates exactly the changed files; one basename stays two documents', async () => {
    const { data, env, key, server } = await serve('kb-ingest-rerun-');
    const folder = path.join(data.path, 'handbook');
    await mkdir(path.join(folder, 'guide'), { recursive: true });
    await mkdir(path.join(folder, 'api'), { recursive: true });
    await writeFile(path.join(folder, 'guide', 'index.md'), '# Guide\n\nHow to start.\n');
    await writeFile(path.join(folder, 'api', 'index.md'), '# API\n\nEvery endpoint.\n');
    await writeFile(path.join(folder, 'faq.md'), '# FAQ\n\nQuestions.\n');
    await writeFile(path.join(folder, 'glossary.txt'), 'Words and what they mean.\n');
    const args = [folder, '--url', server.url, '--key', key];

    const first = await ingest(args, env);
    expect(first).toMatchObject({ created: 4, updated: 0, skipped: 0, failed: 0 });
    const documents = await listed(server.url, key);
    expect(documents.map((d) => [d.name, d.source, d.source_item, d.version])).toEqual([
      ['api/index.md', 'handbook', 'api/index.md', 1],
      ['faq.md', 'handbook', 'faq.md', 1],
      ['glossary.txt', 'handbook', 'glossary.txt', 1],
      ['guide/index.md', 'handbook', 'guide/index.md', 1],
    ]);

    const second = await ingest(args, env);
    expect(second).toMatchObject({ created: 0, updated: 0, skipped: 4, failed: 0, uploaded: [] });
    const summary = (list: Listed[]) => list.map((d) => [d.id, d.name, d.version]);
    expect(summary(await listed(server.url, key))).toEqual(summary(documents));

    await writeFile(path.join(folder, 'guide', 'index.md'), '# Guide\n\nHow to start, second edition.\n');
    await writeFile(path.join(folder, 'faq.md'), '# FAQ\n\nMore questions.\n');
    await writeFile(path.join(folder, 'api', 'changelog.md'), '# Changes\n');
    const third = await ingest(args, env);
    expect(third).toMatchObject({ created: 1, updated: 2, skipped: 2, failed: 0 });
    const after = await listed(server.url, key);
    expect(after.map((d) => [d.name, d.version])).toEqual([
      ['api/changelog.md', 1],
      ['api/index.md', 1],
      ['faq.md', 2],
      ['glossary.txt', 1],
      ['guide/index.md', 2],
    ]);
    const guide = after.find((d) => d.name === 'guide/index.md') as Listed;
    expect(guide.id).toBe(documents.find((d) => d.name === 'guide/index.md')?.id);
    const versions = await fetch(`${server.url}/api/v1/documents/${guide.id}/versions`, {
      headers: { 'X-API-Key': key },
    });
    const history = (await versions.json()) as { versions: Array<{ version: number; change_reason: string | null }> };
    expect(history.versions.find((v) => v.version === 2)?.change_reason).toBe('re-ingested');

    // Text output names the counts too.
    const { stdout } = await run(process.execPath, [KB_BIN, 'ingest', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    expect(stdout).toContain('Ingested 5 files: 0 created, 0 updated, 5 skipped (unchanged), 0 failed.');
  });

  it('creates one document when the answer to an upload is lost and the upload is retried', async () => {
    const { data, env, key, server } = await serve('kb-ingest-lost-');
    const upstream = new URL(server.url);
    const seen = { lookups: 0, uploads: 0, keys: new Set<string>() };
    // Between kb ingest and the service: the first lookup is asked to come back after a second
    // (429 with Retry-After); the first upload reaches the service, whose answer is then cut off.
    const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/api/v1/documents/lookup' && seen.lookups++ === 0) {
        req.resume();
        req.on('end', () => res.writeHead(429, { 'retry-after': '1' }).end('{"detail":"slow down"}'));
        return;
      }
      const isUpload = req.method === 'POST' && req.url === '/api/v1/documents';
      if (isUpload) {
        seen.uploads++;
        seen.keys.add(String(req.headers['idempotency-key']));
      }
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          if (isUpload && seen.uploads === 1) {
            answer.resume();
            answer.on('end', () => res.socket?.destroy());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    await writeFile(path.join(data.path, 'once.md'), '# Once\n\nUploaded one time.\n');
    const report = await ingest([path.join(data.path, 'once.md'), '--url', proxyUrl, '--key', key], env);
    expect(report).toMatchObject({ created: 1, failed: 0 });
    expect(seen.lookups).toBe(2);
    expect(seen.uploads).toBe(2);
    expect(seen.keys.size).toBe(1);
    const documents = await listed(server.url, key);
    expect(documents.map((d) => d.id)).toEqual([report.uploaded[0]?.document_id]);
  });
});
