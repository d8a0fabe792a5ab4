import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSqliteMessageLog } from '../../../core/ports/message-log/sqlite.adapter.ts';
import { describeEventStreamService } from '../../support/event-stream-service-behaviour.ts';

describeEventStreamService('sqlite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kb-event-stream-'));
  return {
    log: createSqliteMessageLog({ file: path.join(dir, 'log.db') }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
