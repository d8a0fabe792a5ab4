import { v7 as uuidv7 } from 'uuid';
import type { ChunkDraft } from '../chunking/chunker.ts';
import type { Config } from '../config/config.ts';
import { embedMissing } from '../embedding/embed-missing.ts';
import { KbError } from '../errors/kb-error.ts';
import type {
  DocumentChunked,
  DocumentEmbedded,
  DocumentIndexed,
  DocumentParsed,
  DocumentUploaded,
  EventBase,
  StageName,
  Topics,
} from '../events/events.ts';
import { notifyVersionCompleted, notifyVersionSettled } from '../events/notify-version.ts';
import { publishEvent } from '../events/publish-event.ts';
import type { VersionRecord } from '../model/document-records.model.ts';
import type { Parser } from '../model/parser.model.ts';
import type { ParsedDocument } from '../parsing/parsed-document.ts';
import type { ChunkInput, DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { EmbeddingProvider } from '../ports/embedding/embedding.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import type { FairGate } from '../util/fair-gate.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { isoNow } from '../util/time.ts';
import { createRecentObjects, type RecentObjects } from './recent-objects.ts';
import type { StageDefinition } from './stage.ts';
import { IngestionCancelled, type Standing, shuttingDown, standingOf } from './version-standing.ts';

export interface StageDeps {
  readonly log: MessageLog;
  readonly objects: ObjectStore;
  readonly documents: DocumentStore;
  readonly topics: Topics;
  readonly chunking: Config['chunking'];
  readonly embeddingBatchSize: number;
  /** Most missing chunks the embed stage embeds per event (fair scheduling). */
  readonly embedSliceChunks: number;
  /** Longest turn of one event in the embed stage (at least one provider batch). Default: no bound. */
  readonly embedSliceMs?: number;
  /**
   * Embedding calls wait for a turn here (by workspace), so one workspace's large documents do not
   * queue another's behind them in the provider. Without it, calls go straight to the provider.
   */
  readonly embeddingGate?: FairGate;
  getParser(): Promise<Parser>;
  getEmbeddings(): Promise<EmbeddingProvider>;
  /** Claim-check objects the stages of this process wrote lately, read back from memory (see `createStages`). */
  readonly recent?: RecentObjects;
}

/**
 * Publishes the next event about the same document version to `topic`, keyed by document: a new
 * event id and time, the trace and version fields of `event`, and `rest`.
 */
async function publishNext<T extends EventBase>(
  deps: StageDeps,
  topic: string,
  event: Pick<EventBase, 'trace_id' | 'document_id' | 'workspace_id' | 'version'>,
  rest: Omit<T, keyof EventBase>,
): Promise<void> {
  const next: EventBase = {
    event_id: uuidv7(),
    occurred_at: isoNow(),
    trace_id: event.trace_id,
    document_id: event.document_id,
    workspace_id: event.workspace_id,
    version: event.version,
    ...rest,
  };
  await publishEvent(deps.log, topic, event.document_id, next);
}

/** Copies of lately written claim-check objects a process keeps: 64 MB, for two minutes. */
const RECENT_OBJECTS = { maxBytes: 64 * 1024 * 1024, maxAgeMs: 120_000 };

/** Chunk batch as stored in object storage between the chunk, embed and index stages. */
type StoredChunk = ChunkDraft;

/** Reads a claim-check object written by {@link writeJson}: this process's copy if it wrote it lately. */
async function readJson<T>(deps: Pick<StageDeps, 'objects' | 'recent'>, key: string): Promise<T> {
  const bytes = deps.recent?.recall(key) ?? (await deps.objects.getBuffer(key));
  return JSON.parse(bytes.toString('utf8')) as T;
}

/** Writes a claim-check object: `value` as JSON under `key` (and keeps a copy for the next stage). */
async function writeJson(deps: Pick<StageDeps, 'objects' | 'recent'>, key: string, value: unknown): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(value));
  await deps.objects.put(key, bytes, { contentType: 'application/json' });
  deps.recent?.remember(key, bytes);
}

/**
 * Texts from this many characters on record the chunk stage's progress as it starts: their chunking
 * takes long enough (about a second a few megabytes) for a client to see it. A shorter text is
 * chunked in milliseconds, and its version shows the parse stage's progress until the embed stage's.
 */
const CHUNK_PROGRESS_CHARACTERS = 1_000_000;

/**
 * Versions of this many chunks on record the index stage's progress as it starts: writing their
 * chunks takes long enough for a client to see it. A smaller one completes a moment later, so its
 * version shows the embed stage's progress until it says `completed`.
 */
const INDEX_PROGRESS_CHUNKS = 500;

/** Records how far a version's ingestion is; a failure to record it never fails the stage. */
async function recordProgress(
  deps: StageDeps,
  event: EventBase,
  stage: StageName,
  chunksDone: number,
  chunksTotal: number,
): Promise<void> {
  await deps.documents
    .updateVersion(event.document_id, event.version, { progress: { stage, chunksDone, chunksTotal } })
    .catch(() => undefined);
}

/**
 * Ends the work on a version that is no longer wanted, so that nothing stays `pending` or
 * `processing` for ever: a superseded version that has not completed is marked failed with
 * `superseded`, one of a deleted document with `document-deleted` (a purge then removes it with
 * the rest of the document); a purged version is gone already.
 */
async function settleCancelled(deps: StageDeps, event: EventBase, stage: StageName, standing: Standing): Promise<void> {
  const current = await deps.documents.getVersion(event.document_id, event.version);
  if (!current || current.status === 'completed' || current.status === 'failed') return;
  const error =
    standing === 'superseded'
      ? {
          code: 'superseded',
          message:
            'A newer version of the document was created before this one finished ingestion; its work was stopped.',
        }
      : {
          code: 'document-deleted',
          message: 'The document was deleted before this version finished ingestion; its work was stopped.',
        };
  await deps.documents.updateVersion(event.document_id, event.version, {
    status: 'failed',
    error: { ...error, stage, attempts: 1, at: isoNow() },
  });
  await notifyVersionSettled(
    { log: deps.log, documents: deps.documents, topic: deps.topics.notification },
    { workspaceId: event.workspace_id, documentId: event.document_id, version: event.version },
    'failed',
  );
}

/**
 * A stage handling events of type `E` on `inputTopic`. An event of a version that is gone (purged,
 * or its document deleted) or superseded by a newer version is not worked on; `checkpoint`, called
 * by long handlers between batches, stops the work there when that happens meanwhile, and throws
 * while the process shuts down so that the event is delivered again after a restart.
 *
 * `prefetch`, when given, runs alongside the lookup of the version's standing and hands `handle`
 * what it read: the stage's own lookups go to the store together with the standing's (one round
 * trip where the store combines concurrent lookups, as OpenSearch's `_mget` does, instead of one
 * after the other). It must only read: what it read is dropped when the version is no longer
 * wanted, and a failure of it fails the event only when the version is.
 */
function versionStage<E extends EventBase, P = undefined>(
  deps: StageDeps,
  name: StageName,
  inputTopic: string,
  handle: (event: E, version: VersionRecord, checkpoint: () => Promise<void>, prefetched: P) => Promise<void>,
  prefetch?: (event: E) => Promise<P>,
): StageDefinition<E> {
  return {
    name,
    inputTopic,
    async handle(event, _attempt, signal) {
      // The standing was read as the handler started; the first checkpoint (before the first
      // batch, moments later) does not read it again.
      let checkedAtStart = true;
      const checkpoint = async (): Promise<void> => {
        if (signal.aborted) throw shuttingDown();
        if (checkedAtStart) {
          checkedAtStart = false;
          return;
        }
        const { standing } = await standingOf(deps.documents, event);
        if (standing !== 'current') throw new IngestionCancelled(standing);
      };
      const read = prefetch ? prefetch(event) : Promise.resolve(undefined as P);
      // Settled here so that a failed read of a version no longer wanted is not left unhandled.
      read.catch(() => undefined);
      const { standing, version } = await standingOf(deps.documents, event);
      try {
        if (standing !== 'current') throw new IngestionCancelled(standing);
        await handle(event, version as VersionRecord, checkpoint, await read);
      } catch (error) {
        if (!(error instanceof IngestionCancelled)) throw error;
        await settleCancelled(deps, event, name, error.standing);
      }
    },
  };
}

export function createParseStage(deps: StageDeps): StageDefinition<DocumentUploaded> {
  return versionStage<DocumentUploaded>(deps, 'parse', deps.topics.uploaded, async (event, version) => {
    if (version.status === 'pending' || version.status === 'failed') {
      await deps.documents.updateVersion(event.document_id, event.version, {
        status: 'processing',
        error: null,
        progress: { stage: 'parse', chunksDone: 0, chunksTotal: 0 },
      });
    }
    const bytes = await deps.objects.getBuffer(event.storage_key);
    const parser = await deps.getParser();
    const parsed = await parser.parse({
      bytes,
      mimeType: event.mime_type,
      filename: event.name,
      share: event.workspace_id,
    });
    if (parsed.text.trim().length === 0) {
      throw new KbError('no-text', 'No text could be extracted from the file.');
    }
    const textRef = storageKeys.parsed(event.workspace_id, event.document_id, event.version);
    await writeJson(deps, textRef, parsed);
    await publishNext<DocumentParsed>(deps, deps.topics.parsed, event, {
      text_ref: textRef,
      mime_type: event.mime_type,
      characters: parsed.text.length,
      pages: parsed.pageCount,
    });
  });
}

export function createChunkStage(deps: StageDeps): StageDefinition<DocumentParsed> {
  return versionStage<DocumentParsed>(deps, 'chunk', deps.topics.parsed, async (event) => {
    if (event.characters >= CHUNK_PROGRESS_CHARACTERS) await recordProgress(deps, event, 'chunk', 0, 0);
    const parsed = await readJson<ParsedDocument>(deps, event.text_ref);
    const parser = await deps.getParser();
    const { chunks, tokens } = await parser.chunk(parsed, deps.chunking, event.workspace_id);
    if (chunks.length === 0) throw new KbError('no-text', 'The extracted text produced no chunks.');
    const chunksRef = storageKeys.chunks(event.workspace_id, event.document_id, event.version);
    await writeJson(deps, chunksRef, chunks);
    await publishNext<DocumentChunked>(deps, deps.topics.chunked, event, {
      chunks_ref: chunksRef,
      chunk_count: chunks.length,
      tokens,
    });
  });
}

/**
 * Embeds only what the vector cache (model, chunk-content hash) lacks, so an update that edits
 * one paragraph re-embeds only the chunks around it. Vectors go to the cache; the event carries
 * the chunk batch reference (claim check), never the vectors.
 *
 * Fairness: one event embeds at most `embedSliceChunks` missing chunks, and stops after the provider
 * batch that ends `embedSliceMs` after it started (turns at the embedding gate included). When more remain, the
 * stage publishes the same event again (same key, so the same partition, behind whatever was
 * queued meanwhile) and ends; the next turn finds the vectors done so far in the cache. Between
 * batches it records progress and stops if the version was deleted, purged or superseded, or the
 * process is shutting down.
 */
export function createEmbedStage(deps: StageDeps): StageDefinition<DocumentChunked> {
  return versionStage<DocumentChunked, EmbedInput>(
    deps,
    'embed',
    deps.topics.chunked,
    async (event, _version, checkpoint, { chunks, provider, cachedVectors }) => {
      const gate = deps.embeddingGate;
      const { embedded, cached, remaining } = await embedMissing(
        deps.documents,
        provider,
        chunks,
        deps.embeddingBatchSize,
        {
          limit: deps.embedSliceChunks,
          cachedVectors,
          ...(deps.embedSliceMs === undefined ? {} : { yieldAfterMs: deps.embedSliceMs }),
          ...(gate ? { aroundCall: (call) => gate.run(event.workspace_id, call) } : {}),
          beforeBatch: checkpoint,
          afterBatch: (done) => recordProgress(deps, event, 'embed', done, chunks.length),
        },
      );
      if (remaining > 0) {
        await publishNext<DocumentChunked>(deps, deps.topics.chunked, event, {
          chunks_ref: event.chunks_ref,
          chunk_count: event.chunk_count,
          tokens: event.tokens,
        });
        return;
      }
      await publishNext<DocumentEmbedded>(deps, deps.topics.embedded, event, {
        chunks_ref: event.chunks_ref,
        chunk_count: event.chunk_count,
        tokens: event.tokens,
        model: provider.model,
        dimensions: provider.dimensions,
        embedded_count: embedded,
        cached_count: cached,
      });
    },
    // The chunk batch and the cache's vectors of its texts, read with the standing.
    async (event) => {
      const chunks = await readJson<StoredChunk[]>(deps, event.chunks_ref);
      const provider = await deps.getEmbeddings();
      const cachedVectors = await deps.documents.getCachedVectors(provider.model, [
        ...new Set(chunks.map((c) => c.contentHash)),
      ]);
      return { chunks, provider, cachedVectors };
    },
  );
}

/** What the embed stage reads alongside the standing. */
interface EmbedInput {
  readonly chunks: StoredChunk[];
  readonly provider: EmbeddingProvider;
  readonly cachedVectors: ReadonlyMap<string, Float32Array>;
}

/** What the index stage reads alongside the standing. */
interface IndexInput {
  readonly chunks: StoredChunk[];
  readonly vectors: ReadonlyMap<string, Float32Array>;
  /** The chunk numbered past the batch's last, left by an older chunking of the version, if any. */
  readonly tail: unknown;
}

/**
 * Makes sure the index holds vectors of `model` (it takes the model when it holds no vectors yet).
 * An index holds one model: vectors of another model fail with `model-mismatch`, telling the
 * operator how to move the index.
 */
async function useIndexModel(documents: DocumentStore, model: string, dimensions: number): Promise<void> {
  try {
    await documents.setIndexModel({ model, dimensions });
  } catch (error) {
    if (!(error instanceof KbError) || error.code !== 'model-mismatch') throw error;
    const current = await documents.getIndexModel();
    const held = current ? `${current.model} (${current.dimensions} dimensions)` : 'another model';
    throw new KbError(
      'model-mismatch',
      `The document was embedded with ${model} (${dimensions} dimensions) but the index holds vectors of ${held}, ` +
        'and an index holds one model. Either run `kb reindex` with this provider to move the index to ' +
        `${model} and then reprocess the document, or configure the index's provider again.`,
      { cause: error },
    );
  }
}

export function createIndexStage(deps: StageDeps): StageDefinition<DocumentEmbedded> {
  return versionStage<DocumentEmbedded, IndexInput>(
    deps,
    'index',
    deps.topics.embedded,
    async (event, _version, _checkpoint, { chunks, vectors, tail }) => {
      // The progress lands before the completion (the store keeps the order of writes).
      const progress =
        event.chunk_count >= INDEX_PROGRESS_CHUNKS
          ? recordProgress(deps, event, 'index', event.chunk_count, event.chunk_count)
          : undefined;
      await Promise.all([useIndexModel(deps.documents, event.model, event.dimensions), progress]);
      const inputs: ChunkInput[] = chunks.map((chunk) => {
        const vector = vectors.get(chunk.contentHash);
        if (!vector) {
          throw new KbError('embedding-failed', `The vector of chunk ${chunk.index} is missing from the cache.`, {
            retriable: true,
          });
        }
        return {
          id: `${event.document_id}:${event.version}:${chunk.index}`,
          documentId: event.document_id,
          workspaceId: event.workspace_id,
          version: event.version,
          index: chunk.index,
          content: chunk.content,
          contentHash: chunk.contentHash,
          tokens: chunk.tokens,
          startOffset: chunk.startOffset,
          endOffset: chunk.endOffset,
          page: chunk.page,
          metadata: chunk.metadata,
          vector,
        };
      });
      if (tail !== null) await deps.documents.deleteChunks(event.document_id, event.version);
      const { served, completed } = await deps.documents.completeVersionWithChunks(
        event.document_id,
        event.version,
        inputs,
        {
          at: isoNow(),
          chunkCount: chunks.length,
          tokens: event.tokens,
          embeddingModel: event.model,
        },
      );
      await publishNext<DocumentIndexed>(deps, deps.topics.indexed, event, {
        chunk_count: chunks.length,
        tokens: event.tokens,
        model: event.model,
        served,
      });
      // The version is searchable now: tell clients (a redelivered event completes and tells again),
      // from the completion's answer rather than a read of the version back.
      await notifyVersionCompleted(
        { log: deps.log, topic: deps.topics.notification },
        { workspaceId: event.workspace_id, documentId: event.document_id, version: event.version },
        completed,
      );
    },
    // The chunk batch, their vectors and the previous tail, read with the standing (one lookup
    // where the store combines them). A version indexed before into more chunks (reprocessed after
    // the chunking settings changed) must not keep its old tail: upserts alone would leave it
    // searchable. Its chunks were numbered from 0 too, so the tail exists if the chunk numbered
    // `chunks.length` does (a lookup by id: real-time on every store, where a list may lag the
    // engine's refresh).
    async (event) => {
      const chunks = await readJson<StoredChunk[]>(deps, event.chunks_ref);
      const [vectors, tail] = await Promise.all([
        deps.documents.getCachedVectors(event.model, [...new Set(chunks.map((c) => c.contentHash))]),
        deps.documents.getChunk(`${event.document_id}:${event.version}:${chunks.length}`),
      ]);
      return { chunks, vectors, tail };
    },
  );
}

/**
 * The stages `names`, sharing one {@link RecentObjects}: when the next stage of a document runs in
 * the same process (`kb serve`, or a worker of several stages), it reads the parsed text or chunk
 * batch from memory instead of from the object store.
 */
export function createStages(deps: StageDeps, names: readonly StageName[]): StageDefinition[] {
  const shared: StageDeps = deps.recent ? deps : { ...deps, recent: createRecentObjects(RECENT_OBJECTS) };
  const factories: Record<StageName, (d: StageDeps) => StageDefinition> = {
    parse: createParseStage,
    chunk: createChunkStage,
    embed: createEmbedStage,
    index: createIndexStage,
  };
  return names.map((name) => factories[name](shared));
}
