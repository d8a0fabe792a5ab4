import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '../model/logger.model.ts';
import { createSqliteControlStore } from '../ports/control-store/sqlite.adapter.ts';
import { createSqliteDocumentStore } from '../ports/document-store/sqlite.adapter.ts';
import { createEmbeddingProvider } from '../ports/embedding/create-embedding-provider.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import { createSqliteMessageLog } from '../ports/message-log/sqlite.adapter.ts';
import { createFilesystemObjectStore } from '../ports/object-store/filesystem.adapter.ts';
import { createParsePool } from '../workers/parse-pool.ts';
import { lazy } from './lazy.ts';
import type { Ports } from './runtime-ports.ts';

/** The embedded runtime: SQLite databases and files under the data directory, one process. */
export async function createEmbeddedPorts(
  config: Config,
  embeddings?: EmbeddingProvider,
  logger?: Logger,
): Promise<Ports> {
  const dir = config.dataDir;
  const objects = createFilesystemObjectStore({ root: path.join(dir, 'objects') });
  const log = createSqliteMessageLog({ file: path.join(dir, 'log.db') });
  const documents = createSqliteDocumentStore({
    file: path.join(dir, 'documents.db'),
    vectorIndex: config.vectorIndex && {
      ...config.vectorIndex,
      ...(logger ? { log: (message: string) => logger.info({ component: 'vector-index' }, message) } : {}),
    },
  });
  const control = createSqliteControlStore({ file: path.join(dir, 'control.db') });
  return withLazyParts(config, { objects, log, logAdmin: log, documents, control }, embeddings);
}

/** Adds the embedding provider and the parse pool, both built on first use, and `close`. */
export function withLazyParts(
  config: Config,
  parts: Pick<Ports, 'objects' | 'log' | 'logAdmin' | 'documents' | 'control'>,
  injected?: EmbeddingProvider,
): Ports {
  const embeddings = lazy(async () => injected ?? createEmbeddingProvider(config.embedding));
  const parser = lazy(async () =>
    createParsePool({
      threads: config.parsing.threads,
      taskTimeoutMs: config.parsing.taskTimeoutMs,
      maxHeapMb: config.parsing.maxHeapMb,
      ocr: config.parsing.ocr,
    }),
  );
  return {
    ...parts,
    getEmbeddings: embeddings.get,
    getParser: parser.get,
    async close() {
      const pool = parser.peek();
      const provider = embeddings.peek();
      await Promise.allSettled([
        pool ? pool.then((p) => p.close()) : Promise.resolve(),
        // A provider handed in by the caller is the caller's to close.
        provider && !injected ? provider.then((p) => p.close()) : Promise.resolve(),
      ]);
      await parts.log.close();
      await Promise.allSettled([parts.objects.close(), parts.documents.close(), parts.control.close()]);
    },
  };
}
