import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createKey, kbResult, startChild, stopChild, tempDir } from '../../support/child-service.ts';
import { cleanupsAfterAll } from '../support/cleanups.ts';
import { page, writeFiles } from '../support/source-client.ts';

/** `kb sources` against a running `kb serve`: a folder source added, synced with --wait, listed, shown and removed. */
describe('kb sources', () => {
  const cleanups = cleanupsAfterAll();

  it('adds, syncs (following the run), lists, shows and removes a folder source', async () => {
    const dir = await tempDir('kb-cli-sources-');
    cleanups.push(dir.remove);
    const root = path.join(dir.path, 'shared');
    const folder = path.join(root, 'handbook');
    await writeFiles(folder, { 'a.md': page('alpha'), 'b.md': page('beta'), 'notes/c.txt': 'gamma notes\n' }, -60);
    const env = {
      KB_DATA_DIR: path.join(dir.path, 'data'),
      KB_BOOTSTRAP_KEY: 'false',
      KB_BOOTSTRAP_ACCOUNT: 'false',
      KB_SOURCE_FOLDER_ROOTS: root,
    };
    const { key } = await createKey(env, { workspace: 'cli', name: 'cli', permissions: 'read,search,write' });
    const service = await startChild(['serve'], env);
    cleanups.push(() => stopChild(service));
    const cli = { ...env, KB_API_URL: service.url, KB_KEY: key };

    const added = await kbResult(
      [
        'sources',
        'add',
        'handbook',
        '--path',
        folder,
        '--exclude',
        'notes/**',
        '--metadata',
        '{"team":"ops"}',
        '--json',
      ],
      cli,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      name: 'handbook',
      kind: 'folder',
      exclude: ['notes/**'],
      status: 'never_synced',
    });

    const refused = await kbResult(['sources', 'add', 'elsewhere', '--path', dir.path], cli);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('422');
    expect(refused.stderr).toContain('KB_SOURCE_FOLDER_ROOTS');

    const synced = await kbResult(['sources', 'sync', 'handbook', '--wait'], cli);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stdout).toMatch(/completed: seen 2, created 2, updated 0, unchanged 0/);
    expect(synced.stderr).toContain('completed: seen 2');

    const again = await kbResult(['sources', 'sync', 'handbook', '--wait', '--json'], cli);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'completed', counts: { unchanged: 2, created: 0 } });

    const list = await kbResult(['sources', 'list'], cli);
    expect(list.stdout).toMatch(/handbook\s+folder\s+\S+handbook\s+manual\s+completed/);
    const shown = await kbResult(['sources', 'show', 'handbook'], cli);
    expect(shown.stdout).toContain('exclude:   notes/**');
    const runs = await kbResult(['sources', 'runs', 'handbook', '--json'], cli);
    expect(JSON.parse(runs.stdout)).toHaveLength(2);

    const unknown = await kbResult(['sources', 'show', 'nothing'], cli);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no source named "nothing"');
    expect((await kbResult(['sources', 'frobnicate', 'x'], cli)).code).toBe(2);

    const removed = await kbResult(['sources', 'remove', 'handbook', '--delete-documents', '--json'], cli);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse((await kbResult(['sources', 'list', '--json'], cli)).stdout)).toEqual([]);
    const docs = await fetch(`${service.url}/api/v1/documents?source=handbook`, { headers: { 'X-API-Key': key } });
    expect(((await docs.json()) as { documents: unknown[] }).documents).toEqual([]);
  }, 180_000);
});
