import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { testConfig } from '../../support/test-client.ts';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('the data directory of the embedded runtime', () => {
  let parent: string | undefined;
  afterEach(async () => {
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it('is created readable by its owner only, and so are its databases', async () => {
    parent = await mkdtemp(path.join(os.tmpdir(), 'kb-modes-'));
    const dataDir = path.join(parent, 'data');
    const runtime = await createRuntime(testConfig(dataDir), { stages: 'none' });
    try {
      const keys = await runtime.services.keys.create({
        workspaceId: 'w',
        name: 'n',
        permissions: ['read'],
        plan: 'starter',
      });
      expect(keys.key).toBeTruthy();
      expect(await modeOf(dataDir)).toBe(0o700);
      const databases = (await readdir(dataDir)).filter((name) => /\.db(-wal|-shm)?$/.test(name));
      expect(databases).toEqual(expect.arrayContaining(['control.db', 'documents.db', 'log.db']));
      for (const name of databases) expect(await modeOf(path.join(dataDir, name)), name).toBe(0o600);
    } finally {
      await runtime.close();
    }
  });
});
