import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesystemObjectStore } from '../../core/ports/object-store/filesystem.adapter.ts';
import type { ObjectStore } from '../../core/ports/object-store/object-store.port.ts';
import { describeObjectStoreContract } from './object-store.contract.ts';

describeObjectStoreContract('filesystem', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'kb-objects-'));
  return {
    store: createFilesystemObjectStore({ root: path.join(root, 'store') }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('filesystem object store', () => {
  let tmp: string;
  let root: string;
  let store: ObjectStore;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'kb-objects-fs-'));
    root = path.join(tmp, 'data', 'objects');
    store = createFilesystemObjectStore({ root });
  });

  afterAll(async () => {
    await store.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('creates its root on ping and writes each object as a file at the key path', async () => {
    await store.ping();
    expect((await stat(root)).isDirectory()).toBe(true);
    await store.put('ws/doc/1/original.pdf', 'pdf bytes');
    expect(await readFile(path.join(root, 'ws', 'doc', '1', 'original.pdf'), 'utf8')).toBe('pdf bytes');
  });

  it('gives a kb:// URL relative to the store, never a path of the server', async () => {
    await store.put('ws/url/thing.txt', 'content');
    expect(store.url('ws/url/thing.txt')).toBe('kb://ws/url/thing.txt');
    expect(store.url('ws/url/thing.txt')).not.toContain(root);
  });

  it('sweeps temporary files of interrupted puts once they are older than asked, and nothing else', async () => {
    await store.put('ws/sweep/kept.txt', 'kept');
    const stale = path.join(root, 'ws', 'sweep', '.gone.txt~1234.tmp');
    const fresh = path.join(root, 'ws', 'sweep', '.young.txt~5678.tmp');
    await writeFile(stale, 'half');
    await writeFile(fresh, 'half');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(stale, old, old);
    expect(await store.sweepTemporary(60_000)).toBe(1);
    expect((await readdir(path.join(root, 'ws', 'sweep'))).sort()).toEqual(['.young.txt~5678.tmp', 'kept.txt']);
    expect(await store.getBuffer('ws/sweep/kept.txt')).toEqual(Buffer.from('kept'));
  });

  it('removes the temporary file of a failed put', async () => {
    const body = new Readable({
      read() {
        this.push(Buffer.alloc(10_000, 1));
        this.destroy(new Error('aborted'));
      },
    });
    await store.put('ws/failed/keep.txt', 'keep');
    await expect(store.put('ws/failed/broken.bin', body)).rejects.toThrow('aborted');
    expect(await filesUnder(path.join(root, 'ws', 'failed'))).toEqual(['keep.txt']);
  });

  it('removes directories that deletes leave empty', async () => {
    await store.put('gone/a/b/c.txt', 'x');
    await store.put('gone/a/d.txt', 'x');
    await store.delete('gone/a/b/c.txt');
    await expect(stat(path.join(root, 'gone', 'a', 'b'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.deletePrefix('gone/')).toBe(1);
    await expect(stat(path.join(root, 'gone'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(root)).isDirectory()).toBe(true);
  });

  it('never reads or writes outside its root', async () => {
    await expect(store.put('../outside.txt', 'x')).rejects.toMatchObject({ code: 'bad-request' });
    await expect(store.getBuffer('ws/../../etc/passwd')).rejects.toMatchObject({ code: 'bad-request' });
    expect((await readdir(path.join(tmp, 'data'))).sort()).toEqual(['objects']);
  });
});
