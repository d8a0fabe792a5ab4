import type { Parser } from '../model/parser.model.ts';
import type { ControlStore } from '../ports/control-store/control-store.port.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import type { MessageLog, MessageLogAdmin } from '../ports/message-log/message-log.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';

/** The infrastructure behind the ports, built for one runtime kind. */
export interface Ports {
  readonly objects: ObjectStore;
  readonly log: MessageLog;
  /** The same log's admin side: backlogs for the dashboard and metrics, clean-up for tests and benchmarks. */
  readonly logAdmin: MessageLogAdmin;
  readonly documents: DocumentStore;
  readonly control: ControlStore;
  /** Loaded on first use: the API needs it for queries, workers for the embed stage, `kb keys` never. */
  getEmbeddings(): Promise<EmbeddingProvider>;
  /** Loaded on first use: only the parse stage parses. */
  getParser(): Promise<Parser>;
  close(): Promise<void>;
}
