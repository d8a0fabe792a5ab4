import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSqliteSourceStore } from '../../core/ports/source-store/sqlite.adapter.ts';
import { describeSourceStoreContract } from './source-store.contract.ts';

describeSourceStoreContract('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-sources-'));
  return {
    store: createSqliteSourceStore({ file: path.join(dir, 'sources.db') }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
