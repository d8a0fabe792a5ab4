/** What every scenario gets: the options of the run, the real provider, the corpus and a progress line. */

import type { EmbeddingProvider } from '../../core/ports/embedding/embedding.port.ts';
import type { CorpusDocument } from '../corpus.ts';
import type { VectorCache } from './providers.ts';
import type { PeerModel } from './python-peer.ts';

export interface BenchOptions {
  readonly quick: boolean;
  /** Rounds of each scenario (figures are min/median/max over them). */
  readonly rounds: number;
  /** Documents ingested through the real embedding model (and for scale-out). */
  readonly localDocs: number;
  /** Corpus sizes of the pipeline-overhead scenario. */
  readonly overheadSizes: readonly number[];
  /** Chunks in the store for the search-latency rows; recall runs at the largest. */
  readonly searchSizes: readonly number[];
  /** Distinct queries per latency run, and queries of the recall row. */
  readonly latencyQueries: number;
  readonly recallQueries: number;
  /** Uploads of the ingress scenario and their size in bytes. */
  readonly ingressFiles: number;
  readonly ingressBytes: number;
  /** Seconds of each autocannon run. */
  readonly apiSeconds: number;
  /** Documents in the store the API-overhead row lists. */
  readonly apiDocuments: number;
  /** Files of the folder the sources row syncs. */
  readonly sourceFiles: number;
  /** Files of the folder the bulk-ingest row loads with `kb ingest`. */
  readonly bulkFiles: number;
  /** Chunks of the knowledge base the backup row backs up and restores. */
  readonly backupChunks: number;
  readonly seed: number;
  /**
   * Where the engines' pid files are (`.run/pids` of the `deploy/native/` that started them, from
   * `--native-dir`): the overhead row counts their CPU by process tree.
   */
  readonly enginePids: string;
}

export interface Corpus {
  readonly dir: string;
  /** File paths in document order. */
  readonly files: readonly string[];
  readonly documents: readonly CorpusDocument[];
}

export interface BenchContext {
  readonly options: BenchOptions;
  /** The configured embedding provider, loaded once for the whole run. */
  readonly provider: EmbeddingProvider;
  /** Vectors the provider computed during the run, by chunk-content hash. */
  readonly vectors: VectorCache;
  /** Chunk count of each corpus document (by file name) as the embedded runtime ingested it. */
  readonly chunkCounts: Map<string, number>;
  readonly corpus: Corpus;
  /** Texts per embedding call of the configured pipeline. */
  readonly batchSize: number;
  /** The configured ONNX model on disk, for the Python peer (null: the provider runs no local ONNX file). */
  readonly onnxModel: PeerModel | null;
  progress(message: string): void;
}
