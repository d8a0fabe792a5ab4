import type { Config } from '../config/config.ts';
import type { Parser } from '../model/parser.model.ts';
import type { AccountStore } from '../ports/account-store/account-store.port.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import type { IdempotencyStore } from '../ports/idempotency-store/idempotency-store.port.ts';
import type { MessageLog, MessageLogAdmin, MessageLogTail } from '../ports/message-log/message-log.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import type { SourceStore } from '../ports/source-store/source-store.port.ts';
import type { WebhookStore } from '../ports/webhook-store/webhook-store.port.ts';
import type { DiskGuard } from './disk-guard.ts';
import { lazy } from './lazy.ts';

/** The infrastructure behind the ports, built for one runtime kind. */
export interface Ports {
  readonly objects: ObjectStore;
  readonly log: MessageLog;
  /** The same log's admin side: backlogs for the dashboard and metrics, clean-up for tests and benchmarks. */
  readonly logAdmin: MessageLogAdmin;
  /** The same log read outside consumer groups: the event stream follows the notification topic with it. */
  readonly logTail: MessageLogTail;
  readonly documents: DocumentStore;
  readonly accountStore: AccountStore;
  /** Sources of synchronisation, their runs and items. */
  readonly sources: SourceStore;
  /** Webhook endpoints and their deliveries. */
  readonly webhooks: WebhookStore;
  /** The `Idempotency-Key`s of clients' writes and their answers, shared by every API process. */
  readonly idempotency: IdempotencyStore;
  /** The embedded runtime's data volume (free-space checks, the reserve for deletes); null on the distributed runtime. */
  readonly disk: DiskGuard | null;
  /** Loaded on first use: the API needs it for queries, workers for the embed stage, `kb keys` never. */
  getEmbeddings(): Promise<EmbeddingProvider>;
  /** Loaded on first use: only the parse stage parses. */
  getParser(): Promise<Parser>;
  close(): Promise<void>;
}

/** Adds the embedding provider and the parse pool, both built on first use, and `close`. */
export function withLazyParts(
  config: Config,
  parts: Pick<
    Ports,
    'objects' | 'log' | 'logAdmin' | 'logTail' | 'documents' | 'accountStore' | 'sources' | 'webhooks' | 'idempotency'
  > & {
    readonly disk?: DiskGuard;
  },
  injected?: EmbeddingProvider,
): Ports {
  // Each imported on first use too: a command that never embeds or parses never loads their code.
  const embeddings = lazy(async () => {
    if (injected) return injected;
    const { createEmbeddingProvider } = await import('./create-embedding-provider.ts');
    return createEmbeddingProvider(config.embedding, config.outbound);
  });
  const parser = lazy(async () => {
    const { createParsePool } = await import('../workers/parse-pool.ts');
    return createParsePool({
      threads: config.parsing.threads,
      taskTimeoutMs: config.parsing.taskTimeoutMs,
      maxHeapMb: config.parsing.maxHeapMb,
      ocr: config.parsing.ocr,
    });
  });
  return {
    ...parts,
    disk: parts.disk ?? null,
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
      await Promise.allSettled([
        parts.objects.close(),
        parts.documents.close(),
        parts.accountStore.close(),
        parts.sources.close(),
        parts.webhooks.close(),
        parts.disk ? parts.disk.close() : Promise.resolve(),
        parts.idempotency.close(),
      ]);
    },
  };
}
