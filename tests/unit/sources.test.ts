import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFolderRoots, resolveFolderPath, rootsOf } from '../../core/sources/folder-roots.ts';
import { createItemMatcher } from '../../core/sources/item-matcher.ts';
import { scheduleMs } from '../../core/sources/schedule.ts';
import { createSecretBox, parseSecretKey } from '../../core/sources/secret-box.ts';

describe('schedules', () => {
  it('reads ISO 8601 durations of fixed length, at least a second', () => {
    expect(scheduleMs('PT15M')).toBe(900_000);
    expect(scheduleMs('P1DT2H')).toBe(93_600_000);
    expect(scheduleMs('P1W')).toBe(604_800_000);
    expect(scheduleMs('PT1.5S')).toBe(1500);
    for (const refused of ['P1M', 'P1Y', 'PT0S', 'PT0.5S', '-PT1M', '15m', '', 'P'])
      expect(scheduleMs(refused)).toBeNull();
  });
});

describe('item patterns', () => {
  it('takes every visible item without include patterns, and excludes win', () => {
    const all = createItemMatcher([], ['drafts/**']);
    expect(all('a.md')).toBe(true);
    expect(all('guides/b.txt')).toBe(true);
    expect(all('drafts/c.md')).toBe(false);
    const md = createItemMatcher(['**/*.md'], []);
    expect(md('a.md')).toBe(true);
    expect(md('deep/er/a.md')).toBe(true);
    expect(md('a.txt')).toBe(false);
  });
});

describe('sealed secrets', () => {
  it('round-trips under the same key and fails under another', () => {
    const key = randomBytes(32);
    const box = createSecretBox(key);
    const sealed = box.seal('{"accessKey":"A","secretKey":"S3CR3T"}');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('S3CR3T');
    expect(box.open(sealed)).toBe('{"accessKey":"A","secretKey":"S3CR3T"}');
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow(/cannot be decrypted/);
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretKey('short')).toBeNull();
  });
});

describe('folder roots', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'kb-roots-'));
    await mkdir(path.join(base, 'root', 'docs'), { recursive: true });
    await mkdir(path.join(base, 'rootish'), { recursive: true });
    await symlink(path.join(base, 'rootish'), path.join(base, 'root', 'link'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('resolves a directory under a root and refuses everything else with path-refused', async () => {
    const roots = [path.join(base, 'root')];
    expect(await resolveFolderPath(path.join(base, 'root', 'docs'), roots)).toBe(path.join(base, 'root', 'docs'));
    expect(await resolveFolderPath(path.join(base, 'root'), roots)).toBe(path.join(base, 'root'));
    for (const refused of [
      path.join(base, 'rootish'), // a sibling sharing the root's name as a prefix
      path.join(base, 'root', 'link'), // a symlink leading out
      `${path.join(base, 'root', 'docs')}/../../rootish`,
      'root/docs',
      path.join(base, 'root', 'missing'),
    ]) {
      await expect(resolveFolderPath(refused, roots)).rejects.toMatchObject({ code: 'path-refused' });
    }
    await expect(resolveFolderPath(path.join(base, 'root', 'docs'), [])).rejects.toMatchObject({
      code: 'path-refused',
    });
  });
});

describe('folder roots granted per workspace', () => {
  it('reads `workspace=/path`, `*=/path` and the older plain `/path` (every workspace)', () => {
    const { roots, problems } = parseFolderRoots('team-a=/srv/a: team-b=/srv/b/ :*=/srv/shared:/srv/old');
    expect(problems).toEqual([]);
    expect(roots).toEqual([
      { workspace: 'team-a', path: '/srv/a' },
      { workspace: 'team-b', path: '/srv/b' },
      { workspace: '*', path: '/srv/shared' },
      { workspace: '*', path: '/srv/old' },
    ]);
    expect(rootsOf(roots, 'team-a')).toEqual(['/srv/a', '/srv/shared', '/srv/old']);
    expect(rootsOf(roots, 'team-c')).toEqual(['/srv/shared', '/srv/old']);
    expect(rootsOf(parseFolderRoots('').roots, 'team-a')).toEqual([]);
  });

  it('names each entry that is not a workspace id or not absolute', () => {
    const { roots, problems } = parseFolderRoots('team a=/srv/a:team-b=relative:docs:ok=/srv/ok');
    expect(roots).toEqual([{ workspace: 'ok', path: '/srv/ok' }]);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('"team a"');
    expect(problems[1]).toContain('"relative" in "team-b=relative" is not an absolute path');
    expect(problems[2]).toContain('"docs" in "docs" is not an absolute path');
  });
});
