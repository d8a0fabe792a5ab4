import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  type ChildService,
  createKey,
  KB_BIN,
  REPO_ROOT,
  startChild,
  stopChild,
  tempDir,
} from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

const run = promisify(execFile);

/**
 * A temporary folder (data directory `data` inside it), a key created with `kb keys create`, and
 * `kb serve` on that data directory; `cleanups` stops the service and removes the folder.
 */
async function serveWithKey(
  cleanups: Array<() => Promise<void>>,
  prefix: string,
  request: Parameters<typeof createKey>[1],
): Promise<{ data: { path: string }; env: Record<string, string>; key: string; server: ChildService }> {
  const data = await tempDir(prefix);
  cleanups.push(data.remove);
  const env = { KB_DATA_DIR: path.join(data.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
  const { key } = await createKey(env, request);
  const server = await startChild(['serve'], env);
  cleanups.push(() => stopChild(server));
  return { data, env, key, server };
}

describe('kb ingest', () => {
  const cleanups = cleanupsAfterAll();

  it('uploads a folder through the API, follows every document to completed and reports progress', async () => {
    const { data, env, key, server } = await serveWithKey(cleanups, 'kb-ingest-', {
      workspace: 'bulk',
      name: 'loader',
      permissions: 'read,write,search',
    });

    const folder = path.join(data.path, 'docs');
    await mkdir(path.join(folder, 'nested'), { recursive: true });
    for (let i = 0; i < 6; i++) {
      await writeFile(
        path.join(folder, i < 3 ? '' : 'nested', `note-${i}.md`),
        `# Note ${i}\n\nCargo manifest entry ${i}.\n`,
      );
    }
    await writeFile(path.join(folder, 'ignored.bin'), Buffer.from([0, 1, 2]));

    const { stdout, stderr } = await run(
      process.execPath,
      [KB_BIN, 'ingest', folder, '--url', server.url, '--key', key, '--concurrency', '3', '--wait', '--source', 'bulk'],
      { cwd: REPO_ROOT, env: { ...process.env, ...env } },
    ).catch((error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`kb ingest failed: ${error.message}\n${error.stdout}\n${error.stderr}\n${server.output()}`);
    });
    expect(stdout).toContain('Ingested 6 files: 6 created, 0 updated, 0 skipped (unchanged), 0 failed.');
    expect(stdout).toContain('Processed 6 of 6 documents; 0 failed.');
    expect(stderr).toMatch(/Uploading/);

    const list = await fetch(`${server.url}/api/v1/documents?source=bulk&limit=100`, { headers: { 'X-API-Key': key } });
    const body = (await list.json()) as { documents: Array<{ status: string }>; pagination: { total: number } };
    expect(body.pagination.total).toBe(6);
    expect(body.documents.every((d) => d.status === 'completed')).toBe(true);
  });

  it('exits non-zero and names the files that failed', async () => {
    const { data, env, key, server } = await serveWithKey(cleanups, 'kb-ingest-bad-', {
      workspace: 'bulk',
      name: 'loader',
      permissions: 'read,write',
    });
    const file = path.join(data.path, 'empty.txt');
    await writeFile(file, '');
    const failure = await run(process.execPath, [KB_BIN, 'ingest', file, '--url', server.url, '--key', key], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    }).catch((error: { code: number; stderr: string; stdout: string }) => error);
    expect('code' in failure && failure.code).toBe(1);
    expect(failure.stderr).toMatch(/empty\.txt: 400 The file is empty/);
  });
});

describe('kb ingest, before anything is uploaded', { timeout: 180_000 }, () => {
  const cleanups = cleanupsAfterAll();

  async function ingest(args: string[], env: Record<string, string> = {}) {
    try {
      const { stdout, stderr } = await run(process.execPath, [KB_BIN, 'ingest', ...args], {
        cwd: REPO_ROOT,
        env: { ...process.env, KB_API_KEY: '', KB_KEY: '', ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  it('refuses options it cannot use, in one line each, with exit 2', async () => {
    const key = ['--key', 'ink_whatever'];
    const cases: Array<[string[], RegExp]> = [
      [['.', ...key, '--concurrency', '0'], /--concurrency must be a whole number from 1 to 64, not "0"/],
      [['.', ...key, '--concurrency', 'four'], /--concurrency must be a whole number from 1 to 64, not "four"/],
      [['.', ...key, '--metadata', '{team:docs}'], /--metadata must be a JSON object.*is not valid JSON/],
      [['.', ...key, '--metadata', '[1]'], /--metadata must be a JSON object.*not an array/],
      [['.', ...key, '--url', 'localhost:8080'], /--url must be the service's http\(s\) URL/],
      [['.', ...key, '--source', ' '], /--source must be 1 to 256 characters/],
      [['.'], /needs an API key with write permission/],
      [[...key], /needs at least one file or folder/],
    ];
    const results = await Promise.all(cases.map(([args]) => ingest(args)));
    cases.forEach(([args, message], i) => {
      expect(results[i]?.code, args.join(' ')).toBe(2);
      expect(results[i]?.stderr).toMatch(message);
    });
  });

  it('says in one line that nothing answers at the URL, or that it is not this service', async () => {
    const data = await tempDir('kb-ingest-down-');
    cleanups.push(data.remove);
    await writeFile(path.join(data.path, 'a.md'), '# A\n');
    const port = await freePort();
    const down = await ingest([data.path, '--key', 'ink_x', '--url', `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe(
      `kb ingest: cannot reach the service at http://127.0.0.1:${port} (connection refused); is it running? Set --url or KB_API_URL.`,
    );

    const other = createServer((_req, res) => res.writeHead(404).end('not here'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const wrong = await ingest([data.path, '--key', 'ink_x', '--url', otherUrl]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe(
      `kb ingest: ${otherUrl} does not answer as kb-document-service (GET /health/live: 404); check --url or KB_API_URL.`,
    );
  });

  it('takes the key from KB_KEY (as the service prints it) when KB_API_KEY is not set', async () => {
    const data = await tempDir('kb-ingest-env-key-');
    cleanups.push(data.remove);
    await writeFile(path.join(data.path, 'a.md'), '# A\n');
    // Answers as the service and refuses every upload, noting the key it was given.
    const presented: string[] = [];
    const fake = createServer((req, res) => {
      if (req.url === '/health/live') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"service":"kb-document-service"}');
        return;
      }
      presented.push(String(req.headers['x-api-key']));
      req.resume();
      req.on('end', () => res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"no"}'));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => fake.close(() => resolve())));
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

    const fromKbKey = await ingest([data.path, '--url', url], { KB_KEY: 'ink_fromkbkey' });
    expect(fromKbKey.stderr).not.toContain('needs an API key');
    expect(fromKbKey.stderr).toContain('the service refused the API key');
    const both = await ingest([data.path, '--url', url], { KB_KEY: 'ink_fromkbkey', KB_API_KEY: 'ink_fromapikey' });
    expect(both.stderr).toContain('the service refused the API key');
    expect(presented).toEqual(['ink_fromkbkey', 'ink_fromapikey']);
  });

  it('stops at a refused key before its progress bar starts and before any other upload goes out', async () => {
    const data = await tempDir('kb-ingest-refused-');
    cleanups.push(data.remove);
    for (const name of ['a.md', 'b.md', 'c.md', 'd.md', 'e.md', 'f.md']) {
      await writeFile(path.join(data.path, name), `# ${name}\n`);
    }
    let uploads = 0;
    const fake = createServer((req, res) => {
      if (req.url === '/health/live') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"service":"kb-document-service"}');
        return;
      }
      if (req.url === '/api/v1/documents') uploads += 1;
      req.resume();
      req.on('end', () =>
        res
          .writeHead(403, { 'content-type': 'application/json' })
          .end('{"detail":"This API key lacks the \'write\' permission."}'),
      );
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => fake.close(() => resolve())));
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

    const result = await ingest([data.path, '--url', url, '--key', 'ink_readonly', '--concurrency', '4']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      "kb ingest: the service refused the API key (403 This API key lacks the 'write' permission.); use a key with write permission.",
    );
    expect(uploads).toBe(1);
  });

  it('lists the paths it skips and why, and reports the run as JSON with --json', async () => {
    const { data, env, key, server } = await serveWithKey(cleanups, 'kb-ingest-skip-', {
      workspace: 'skip',
      name: 'loader',
      permissions: 'write',
    });
    const { key: readKey } = await createKey(env, { workspace: 'skip', name: 'reader', permissions: 'read' });
    const folder = path.join(data.path, 'docs');
    await mkdir(path.join(folder, '.git'), { recursive: true });
    await writeFile(path.join(folder, 'note.md'), '# Note\n\nKept.\n');
    await writeFile(path.join(folder, 'photo.png'), Buffer.from([0x89, 0x50]));
    await writeFile(path.join(folder, 'Makefile'), 'all:\n');
    const missing = path.join(data.path, 'nowhere.txt');

    const text = await ingest([folder, missing, '--url', server.url, '--key', key]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Ingested 1 file: 1 created, 0 updated, 0 skipped (unchanged), 0 failed.');
    expect(text.stderr).toContain('Ignored 4 paths:');
    expect(text.stderr).toContain(`  - ${path.join(folder, '.git')}: hidden (name starts with ".")`);
    expect(text.stderr).toContain(`  - ${path.join(folder, 'Makefile')}: (no extension) is not a supported format`);
    expect(text.stderr).toContain(`  - ${path.join(folder, 'photo.png')}: .png is not a supported format`);
    expect(text.stderr).toContain(`  - ${missing}: does not exist`);

    const json = await ingest([folder, '--url', server.url, '--key', key, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      skipped: number;
      created: number;
      updated: number;
      failed: number;
      uploaded: unknown[];
      ignored: Array<{ path: string; reason: string }>;
      failures: unknown[];
    };
    // A key without the read permission cannot look the file up: it is sent again, and its
    // Idempotency-Key (the same path and content) answers the first upload instead of a second.
    expect(report).toMatchObject({ skipped: 1, created: 0, updated: 0, failed: 0, uploaded: [], failures: [] });
    expect(report.ignored.map((s) => path.basename(s.path)).sort()).toEqual(['.git', 'Makefile', 'photo.png']);
    const list = await fetch(`${server.url}/api/v1/documents?limit=100`, { headers: { 'X-API-Key': readKey } });
    expect(((await list.json()) as { pagination: { total: number } }).pagination.total).toBe(1);
  });

  it('stops at the first refusal of the key instead of failing every file', async () => {
    const data = await tempDir('kb-ingest-key-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: path.join(data.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
    const server = await startChild(['serve'], env);
    cleanups.push(() => stopChild(server));
    for (let i = 0; i < 5; i++) await writeFile(path.join(data.path, `n${i}.md`), `# ${i}\n`);
    const result = await ingest([
      data.path,
      '--url',
      server.url,
      '--key',
      'ink_notavalidkeynotavalidkeynotavalid00',
      '--concurrency',
      '1',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /kb ingest: the service refused the API key \(401 The API key is invalid or has been revoked\.\)/,
    );
    expect(result.stderr).not.toContain('✗');
  });
});
