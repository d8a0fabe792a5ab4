/**
 * The folder reader against a folder whose files are swapped under it: between the listing and
 * the read, between two reads of one item, for a directory of its path, for a FIFO or a device;
 * and the bounds of a read (size at opening, upload limit, time). Each swap is made at a fixed
 * point between the reader's calls, so every case is deterministic.
 */
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KbError } from '../../core/errors/kb-error.ts';
import { createFolderReader } from '../../core/sources/folder.reader.ts';
import { createItemMatcher } from '../../core/sources/item-matcher.ts';
import type { SourceContent, SourceEntry, SourceReader } from '../../core/sources/source-reader.ts';

let base: string;
let root: string;
let outside: string;
const SECRET = 'root:x:0:0:the secret outside the folder';

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kb-folder-reader-'));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  await writeFile(path.join(outside, 'a.md'), SECRET);
  await writeFile(path.join(root, 'a.md'), 'alpha inside');
  await writeFile(path.join(root, 'sub', 'a.md'), 'sub alpha inside');
});
afterEach(() => rm(base, { recursive: true, force: true }));

function reader(options: { maxBytes?: number; timeoutMs?: number } = {}): SourceReader {
  return createFolderReader({
    path: root,
    roots: [root],
    matcher: createItemMatcher([], []),
    maxBytes: options.maxBytes ?? 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}

async function listed(source: SourceReader): Promise<Map<string, SourceEntry>> {
  const entries = new Map<string, SourceEntry>();
  for await (const item of source.list()) if (!('failure' in item)) entries.set(item.key, item);
  return entries;
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

async function readOf(source: SourceReader, entry: SourceEntry): Promise<SourceContent> {
  const content = await source.read(entry, undefined);
  if (content === 'not-modified') throw new Error('unexpected not-modified');
  return content;
}

/** Replaces `file` at once (rename over it) by a symlink to `target`. */
async function swapForSymlink(file: string, target: string): Promise<void> {
  const tmp = `${file}.swap`;
  await symlink(target, tmp);
  await rename(tmp, file);
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as KbError,
  );

describe('a file swapped between the listing and the read', () => {
  it('for a symlink to a file outside: refused (path-refused), nothing read', async () => {
    const source = reader();
    const entries = await listed(source);
    await swapForSymlink(path.join(root, 'a.md'), path.join(outside, 'secret.txt'));
    const error = await refusal(source.read(entries.get('a.md') as SourceEntry, undefined));
    expect(error).toBeInstanceOf(KbError);
    expect(error).toMatchObject({ code: 'path-refused', message: expect.stringContaining('symbolic link') });
  });

  it('for a FIFO: refused at once, without waiting for a writer', async () => {
    const source = reader();
    const entries = await listed(source);
    await rm(path.join(root, 'a.md'));
    execFileSync('mkfifo', [path.join(root, 'a.md')]);
    const error = await refusal(source.read(entries.get('a.md') as SourceEntry, undefined));
    expect(error).toMatchObject({ code: 'path-refused', message: expect.stringContaining('not a regular file') });
  });

  it('for a symlink to /dev/zero: refused, nothing read', async () => {
    const source = reader();
    const entries = await listed(source);
    await swapForSymlink(path.join(root, 'a.md'), '/dev/zero');
    const error = await refusal(source.read(entries.get('a.md') as SourceEntry, undefined));
    expect(error).toMatchObject({ code: 'path-refused' });
  });

  it('for a directory of its path swapped for a symlink leading outside: refused', async () => {
    const source = reader();
    const entries = await listed(source);
    await rename(path.join(root, 'sub'), path.join(base, 'sub-moved'));
    await symlink(outside, path.join(root, 'sub'));
    const error = await refusal(source.read(entries.get('sub/a.md') as SourceEntry, undefined));
    expect(error).toMatchObject({ code: 'path-refused', message: expect.stringContaining('outside') });
  });
});

describe('a file swapped between two reads of one item', () => {
  it('reads the file it opened both times, never what replaced it', async () => {
    const source = reader();
    const entries = await listed(source);
    const content = await readOf(source, entries.get('a.md') as SourceEntry);
    try {
      expect(await text(content.open())).toBe('alpha inside');
      await swapForSymlink(path.join(root, 'a.md'), path.join(outside, 'secret.txt'));
      expect(await text(content.open())).toBe('alpha inside');
      await rm(path.join(root, 'a.md'));
      execFileSync('mkfifo', [path.join(root, 'a.md')]);
      expect(await text(content.open())).toBe('alpha inside');
    } finally {
      content.close?.();
    }
  });
});

describe('what the listing skips or refuses', () => {
  it('skips FIFOs, sockets and hidden names, and lists symlinks as refused items without following them', async () => {
    execFileSync('mkfifo', [path.join(root, 'pipe.md')]);
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link-out.md'));
    await symlink(path.join(root, 'a.md'), path.join(root, 'link-in.md'));
    await symlink(outside, path.join(root, 'dir-out'));
    await symlink('/dev/zero', path.join(root, 'zero.md'));
    await writeFile(path.join(root, '.hidden.md'), 'hidden');
    const items: string[] = [];
    const failures: Array<{ item: string; code: string }> = [];
    for await (const item of reader().list()) {
      if ('failure' in item) failures.push({ item: item.failure.item, code: item.failure.code });
      else items.push(item.key);
    }
    expect(items).toEqual(['a.md', 'sub/a.md']);
    expect(failures).toEqual(
      ['dir-out', 'link-in.md', 'link-out.md', 'zero.md'].map((item) => ({ item, code: 'path-refused' })),
    );
  });

  it('refuses a run whose folder is no longer under the roots, and one whose folder is gone', async () => {
    const moved = createFolderReader({
      path: root,
      roots: [outside],
      matcher: createItemMatcher([], []),
      maxBytes: 1024,
      timeoutMs: 1000,
    });
    await expect(listed(moved)).rejects.toMatchObject({ code: 'path-refused' });
    await rename(root, `${root}-gone`);
    await expect(listed(reader())).rejects.toMatchObject({ code: 'source-unreachable' });
  });
});

describe('the bounds of a read', () => {
  it('reads a file up to the size it had when opened, even as it grows', async () => {
    const source = reader();
    const entries = await listed(source);
    const content = await readOf(source, entries.get('a.md') as SourceEntry);
    try {
      await appendFile(path.join(root, 'a.md'), ' and more appended later');
      expect(await text(content.open())).toBe('alpha inside');
    } finally {
      content.close?.();
    }
  });

  it('refuses a file grown past the upload limit since the listing (payload-too-large)', async () => {
    const source = reader({ maxBytes: 20 });
    const entries = await listed(source);
    await appendFile(path.join(root, 'a.md'), 'x'.repeat(100));
    await expect(source.read(entries.get('a.md') as SourceEntry, undefined)).rejects.toMatchObject({
      code: 'payload-too-large',
    });
  });

  it('fails the reads of an item past its time bound (timeout)', async () => {
    const source = reader({ timeoutMs: 100 });
    const entries = await listed(source);
    const content = await readOf(source, entries.get('a.md') as SourceEntry);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await expect(text(content.open())).rejects.toMatchObject({ code: 'timeout' });
    } finally {
      content.close?.();
    }
  });

  it.skipIf(process.platform !== 'linux')('releases the descriptor when the item is closed', async () => {
    const file = path.join(root, 'a.md');
    const holders = async () => {
      const found: string[] = [];
      for (const fd of await readdir('/proc/self/fd')) {
        const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
        if (target === file) found.push(fd);
      }
      return found;
    };
    const source = reader();
    const entries = await listed(source);
    const content = await readOf(source, entries.get('a.md') as SourceEntry);
    expect(await holders()).toHaveLength(1);
    const stream = content.open();
    content.close?.();
    await expect(text(stream)).rejects.toThrow();
    await expect.poll(holders).toEqual([]);
    await expect(text(content.open())).rejects.toThrow();
  });
});
