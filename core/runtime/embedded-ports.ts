import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '../model/logger.model.ts';
import { createSqliteAccountStore } from '../ports/account-store/sqlite.adapter.ts';
import { createSqliteDocumentStore } from '../ports/document-store/sqlite.adapter.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { createSqliteIdempotencyStore } from '../ports/idempotency-store/sqlite.adapter.ts';
import { createSqliteMessageLog } from '../ports/message-log/sqlite.adapter.ts';
import { createFilesystemObjectStore } from '../ports/object-store/filesystem.adapter.ts';
import { createSqliteSourceStore } from '../ports/source-store/sqlite.adapter.ts';
import { createSqliteWebhookStore } from '../ports/webhook-store/sqlite.adapter.ts';
import { createDiskGuard } from './disk-guard.ts';
import { type Ports, withLazyParts } from './runtime-ports.ts';

/**
 * The embedded runtime: SQLite databases and files under the data directory, one process. A data
 * directory it creates is its owner's only (0700), as are the databases (0600).
 */
export async function createEmbeddedPorts(
  config: Config,
  embeddings?: EmbeddingProvider,
  logger?: Logger,
  options: { readonly followKeywordIndex?: boolean } = {},
): Promise<Ports> {
  const dir = config.dataDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const objects = createFilesystemObjectStore({ root: path.join(dir, 'objects') });
  const log = createSqliteMessageLog({ file: path.join(dir, 'log.db'), keyConcurrency: config.logKeyConcurrency });
  const documents = createSqliteDocumentStore({
    file: path.join(dir, 'documents.db'),
    vectorIndex: config.vectorIndex && {
      ...config.vectorIndex,
      // The process that answers queries opens (or starts building) both indexes at start.
      openAtStart: options.followKeywordIndex ?? false,
      ...(logger ? { log: (message: string) => logger.info({ component: 'vector-index' }, message) } : {}),
    },
    keywordIndex: config.keywordIndex && {
      ...config.keywordIndex,
      follow: options.followKeywordIndex ?? false,
      ...(logger ? { log: (message: string) => logger.info({ component: 'keyword-index' }, message) } : {}),
    },
  });
  // `control.db`: the account store's file keeps the name existing data directories have.
  const accountStore = createSqliteAccountStore({ file: path.join(dir, 'control.db') });
  const sources = createSqliteSourceStore({ file: path.join(dir, 'sources.db') });
  const webhooks = createSqliteWebhookStore({ file: path.join(dir, 'webhooks.db') });
  const idempotency = createSqliteIdempotencyStore({ file: path.join(dir, 'idempotency.db') });
  const disk = createDiskGuard({
    dir,
    minFreeBytes: config.storage.minFreeBytes,
    reserveBytes: config.storage.reserveBytes,
  });
  return withLazyParts(
    config,
    { objects, log, logAdmin: log, logTail: log, documents, accountStore, sources, webhooks, idempotency, disk },
    embeddings,
  );
}
