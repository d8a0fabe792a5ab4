import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildCli } from '../../scripts/build-cli.ts';
import { REPO_ROOT, stopChild, tempDir, waitForDocument } from '../../support/child-service.ts';
import { freePort } from '../../support/ports.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';

const run = promisify(execFile);
const REFUSE_TYPESCRIPT = path.join(REPO_ROOT, 'tests', 'fixtures', 'cli', 'refuse-typescript.mjs');

/** A copy of the tree `kb` runs from (its packages linked), so its sources can be edited freely. */
async function copyOfTree(into: string): Promise<string> {
  const root = path.join(into, 'tree');
  await mkdir(root);
  for (const entry of ['apps', 'core', 'bin', 'schemas', 'scripts', 'package.json', 'tsconfig.json']) {
    await cp(path.join(REPO_ROOT, entry), path.join(root, entry), {
      recursive: true,
      filter: (source) => !source.split(path.sep).includes('dist'),
    });
  }
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return root;
}

/** Runs `kb` of the tree at `root`; `nodeOptions` go before the script (`--import` of a hook). */
async function kbIn(root: string, args: string[], env: Record<string, string>, nodeOptions: string[] = []) {
  const { stdout, stderr } = await run(process.execPath, [...nodeOptions, path.join(root, 'bin', 'kb.js'), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  return { stdout, stderr };
}

/** Replaces `from` by `to` in every file of the build (what the bundle prints, not what it was built from). */
async function editBuild(root: string, from: string, to: string): Promise<void> {
  const base = path.join(root, 'dist', 'cli');
  const record = JSON.parse(await readFile(path.join(base, 'build.json'), 'utf8')) as { entry: string };
  const dir = path.join(base, path.dirname(record.entry));
  let edited = 0;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.js')) continue;
    const text = await readFile(path.join(dir, name), 'utf8');
    if (!text.includes(from)) continue;
    await writeFile(path.join(dir, name), text.replaceAll(from, to));
    edited++;
  }
  expect(edited).toBeGreaterThan(0);
}

// Builds the bundle and starts several `kb` processes; on a busy machine that takes a while.
describe('the prebuilt kb', { timeout: 240_000 }, () => {
  const cleanups = cleanupsAfterAll();

  it('runs a command from the build while it is current, and the sources as soon as one is edited', async () => {
    const temp = await tempDir('kb-prebuilt-');
    cleanups.push(temp.remove);
    const root = await copyOfTree(temp.path);
    const env = { KB_DATA_DIR: path.join(temp.path, 'data') };

    const built = await buildCli(root);
    expect(built.inputs).toBeGreaterThan(50);
    // Marks what the build prints, so the answer tells which code ran.
    await editBuild(root, '"No keys."', '"No keys (from the build)."');
    // Run in a process that refuses to load TypeScript or tsx: the build needs neither.
    const fromBuild = await kbIn(root, ['keys', 'list'], env, ['--import', REFUSE_TYPESCRIPT]);
    expect(fromBuild.stdout.trim()).toBe('No keys (from the build).');

    const source = path.join(root, 'apps', 'cli', 'commands', 'keys.command.ts');
    const text = await readFile(source, 'utf8');
    expect(text).toContain("'No keys.'");
    await writeFile(source, text.replace("'No keys.'", "'No keys (edited source).'"));
    const fromSources = await kbIn(root, ['keys', 'list'], env);
    expect(fromSources.stdout.trim()).toBe('No keys (edited source).');

    // Built again, the build is current again and runs the edit.
    await buildCli(root);
    await editBuild(root, '"No keys (edited source)."', '"No keys (edited, from the build)."');
    expect((await kbIn(root, ['keys', 'list'], env)).stdout.trim()).toBe('No keys (edited, from the build).');
  });

  it('serves from the build: the API answers and an uploaded file is parsed, chunked and searchable', async () => {
    const temp = await tempDir('kb-prebuilt-serve-');
    cleanups.push(temp.remove);
    const root = await copyOfTree(temp.path);
    await buildCli(root);
    await editBuild(root, '"No keys."', '"No keys (from the build)."');
    const env = { KB_DATA_DIR: path.join(temp.path, 'data'), KB_BOOTSTRAP_KEY: 'false' };
    expect((await kbIn(root, ['keys', 'list'], env)).stdout.trim()).toBe('No keys (from the build).');
    const created = await kbIn(
      root,
      ['keys', 'create', '--workspace', 'ws', '--name', 'prebuilt', '--permissions', 'read,search,write', '--json'],
      env,
    );
    const { key } = JSON.parse(created.stdout) as { key: string };

    const port = String(await freePort());
    // Its main thread refuses TypeScript: only the parse pool's threads run sources (through tsx).
    const child = spawn(process.execPath, ['--import', REFUSE_TYPESCRIPT, path.join(root, 'bin', 'kb.js'), 'serve'], {
      cwd: root,
      env: { ...process.env, ...env, KB_LOG_LEVEL: 'warn', PORT: port },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const server = { url: `http://127.0.0.1:${port}`, process: child, output: () => output, exited };
    cleanups.push(() => stopChild(server));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`kb serve exited early:\n${output}`);
      const live = await fetch(`${server.url}/health/live`).catch(() => null);
      if (live?.ok) break;
      if (Date.now() > deadline) throw new Error(`kb serve did not answer:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    const form = new FormData();
    form.append('file', new Blob(['The lighthouse keeper logs every passing ship in a ledger.']), 'ledger.txt');
    const upload = await fetch(`${server.url}/api/v1/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': key },
      body: form,
    });
    expect(upload.status).toBe(201);
    const { document_id: id } = (await upload.json()) as { document_id: string };
    const document = await waitForDocument(server.url, key, id, ['completed', 'failed']);
    expect(document.status, output).toBe('completed');
    const search = await fetch(`${server.url}/api/v1/search`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'lighthouse ledger' }),
    });
    expect(search.status).toBe(200);
    expect(JSON.stringify(await search.json())).toContain(id);
  });
});
