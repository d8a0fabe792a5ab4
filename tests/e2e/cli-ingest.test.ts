import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { KB_BIN, kb, REPO_ROOT, startChild, stopChild, tempDir } from '../support/child-service.ts';

const run = promisify(execFile);

describe('kb ingest', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('uploads a folder through the API, follows every document to completed and reports progress', async () => {
    const data = await tempDir('kb-ingest-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: path.join(data.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
    const { key } = JSON.parse(
      await kb(
        ['keys', 'create', '--workspace', 'bulk', '--name', 'loader', '--permissions', 'read,write,search', '--json'],
        env,
      ),
    ) as { key: string };
    const server = await startChild(['serve'], env);
    cleanups.push(() => stopChild(server));

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
    expect(stdout).toContain('Uploaded 6 of 6 files.');
    expect(stdout).toContain('Processed 6 of 6 documents; 0 failed.');
    expect(stderr).toMatch(/Uploading/);

    const list = await fetch(`${server.url}/api/v1/documents?source=bulk&limit=100`, { headers: { 'X-API-Key': key } });
    const body = (await list.json()) as { documents: Array<{ status: string }>; pagination: { total: number } };
    expect(body.pagination.total).toBe(6);
    expect(body.documents.every((d) => d.status === 'completed')).toBe(true);
  });

  it('exits non-zero and names the files that failed', async () => {
    const data = await tempDir('kb-ingest-bad-');
    cleanups.push(data.remove);
    const env = { KB_DATA_DIR: path.join(data.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
    const { key } = JSON.parse(
      await kb(
        ['keys', 'create', '--workspace', 'bulk', '--name', 'loader', '--permissions', 'read,write', '--json'],
        env,
      ),
    ) as { key: string };
    const server = await startChild(['serve'], env);
    cleanups.push(() => stopChild(server));
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
