import { createHash } from 'node:crypto';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { ItemRecord, RunError, SourceRecord, SourceStore } from '../ports/source-store/source-store.port.ts';
import type { SourceContent, SourceEntry, SourceReader } from '../sources/source-reader.ts';
import type { DocumentWritesService } from './document-writes.service.ts';
import type { RequestContext } from './request-context.ts';
import type { UploadStagingService } from './upload-staging.service.ts';

/** The change reason of a version a sync wrote because its item changed at the source. */
export const SYNC_CHANGED = 'sync: changed at source';
/** The change reason of a document a sync created for a new item. */
export const SYNC_ADDED = 'sync: added at source';

export type ItemOutcome = 'created' | 'updated' | 'unchanged';

/** The process is shutting down: the run stays `running` and is resumed later. */
export class RunLeft extends Error {}

/** The document name of an item: the file name of a path or key, the last segment of a URL. */
export function itemName(key: string): string {
  if (/^https?:\/\//i.test(key)) {
    const url = new URL(key);
    const last = url.pathname.split('/').filter(Boolean).at(-1);
    return last ? decodeURIComponent(last) : url.hostname;
  }
  return path.posix.basename(key) || key;
}

/**
 * Who a sync run's writes are by: the source itself (audit `actor` `{type: "source", id, name}`,
 * versions `created_by` `source:<id>`), never the key that created or started it.
 */
export function sourceActorContext(source: SourceRecord, traceId: string): RequestContext {
  return {
    workspaceId: source.workspaceId,
    keyId: source.id,
    actorType: 'source',
    actorName: source.name,
    traceId,
  };
}

/** True when the listing alone shows the item is as the last run saw it. */
function sameListing(entry: SourceEntry, known: ItemRecord): boolean {
  if (entry.etag !== null && entry.etag === known.etag) {
    return entry.sizeBytes === null || entry.sizeBytes === known.sizeBytes;
  }
  return (
    entry.sizeBytes !== null &&
    entry.mtimeMs !== null &&
    entry.sizeBytes === known.sizeBytes &&
    entry.mtimeMs === known.mtimeMs
  );
}

async function sha256Of(content: SourceContent): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(content.open(), hash);
  return hash.digest('hex');
}

export interface SourceItemSyncDeps {
  readonly store: SourceStore;
  readonly documents: DocumentStore;
  readonly documentWrites: DocumentWritesService;
  readonly uploads: UploadStagingService;
  readonly maxUploadBytes: number;
  /** A run deleting more than this fraction of the source's documents deletes none (unless allowed). */
  readonly maxDeleteFraction: number;
  /** True once the process is shutting down: an item not written yet is left (throws {@link RunLeft}). */
  readonly closed: () => boolean;
  /** Contents being read, so that shutting down can close them. */
  readonly reading: Set<SourceContent>;
}

export interface SourceItemSync {
  /** Brings one listed item's document up to date; rejects with the item's failure. */
  syncItem(
    ctx: RequestContext,
    source: SourceRecord,
    reader: SourceReader,
    entry: SourceEntry,
    known: ItemRecord | undefined,
  ): Promise<ItemOutcome>;
  /**
   * Deletes the documents of the items gone from the source (not purged), unless the listing was
   * capped or they are more than `maxDeleteFraction` of `total` and the run does not allow it:
   * then none is deleted, they are counted as `deletionsHeld` and an error `deletions-held` says why.
   */
  removeGone(
    ctx: RequestContext,
    source: SourceRecord,
    run: { readonly allowMassDelete: boolean },
    gone: ItemRecord[],
    total: number,
    counts: { deleted: number; deletionsHeld: number },
    errors: RunError[],
    listingCapped: boolean,
  ): Promise<void>;
}

/**
 * How one item of a source becomes a document. An item decides from the listing (size + mtime,
 * ETag) or the source's own answer (HTTP 304) whether it changed, then from the SHA-256 of its
 * content; an unchanged item costs no staging, no parse, no embedding. A changed item becomes a
 * new version through the same write path as a PUT (change reason {@link SYNC_CHANGED}), a new
 * one a new document ({@link SYNC_ADDED}), written as the source ({@link sourceActorContext}).
 *
 * Promises: an item interrupted anywhere (a crash) and synced again writes no second version:
 * the item's record names its document before the document is created, and an item whose
 * document already holds the content is only recorded.
 */
export function createSourceItemSync(deps: SourceItemSyncDeps): SourceItemSync {
  const { store, documents, documentWrites, uploads } = deps;

  /** Writes an item read as `content`: recorded unchanged, a new version, or a new document. */
  async function writeItem(
    ctx: RequestContext,
    source: SourceRecord,
    entry: SourceEntry,
    known: ItemRecord | undefined,
    content: SourceContent,
  ): Promise<ItemOutcome> {
    const sha256 = await sha256Of(content);
    const record = (documentId: string, hash: string | null): ItemRecord => ({
      sourceId: source.id,
      itemKey: entry.key,
      documentId,
      sizeBytes: entry.sizeBytes,
      mtimeMs: entry.mtimeMs,
      etag: content.etag ?? entry.etag,
      lastModified: content.lastModified ?? entry.lastModified,
      sha256: hash,
    });
    if (known && known.sha256 === sha256) {
      await store.putItem(record(known.documentId, sha256));
      return 'unchanged';
    }
    const stageFor = (documentId: string) =>
      uploads.stage({
        workspaceId: source.workspaceId,
        documentId,
        stream: content.open(),
        filename: itemName(entry.key),
        ...(content.contentType ? { declaredType: content.contentType } : {}),
      });

    const current = known ? await documents.getDocument(source.workspaceId, known.documentId) : null;
    if (known && current) {
      const outcome: ItemOutcome = known.sha256 === null ? 'created' : 'updated';
      // Written already by a run that stopped before recording it: only recorded now.
      if (current.latest.contentHash !== sha256) {
        const staged = await stageFor(current.id);
        await documentWrites.replaceContent(ctx, current.id, {
          staged,
          metadata: { ...source.metadata },
          changeReason: SYNC_CHANGED,
        });
      }
      await store.putItem(record(current.id, sha256));
      return outcome;
    }
    // A new item, or one whose document is gone. An id recorded by an interrupted creation is
    // reused unless a document was made with it (and deleted since).
    const reuse = known && known.sha256 === null && !(await documents.getVersion(known.documentId, 1));
    const documentId = reuse ? known.documentId : uuidv7();
    const staged = await stageFor(documentId);
    try {
      await store.putItem(record(documentId, null));
    } catch (error) {
      await uploads.discard(staged).catch(() => {});
      throw error;
    }
    await documentWrites.create(ctx, {
      staged,
      metadata: { ...source.metadata },
      source: source.name,
      sourceItem: entry.key,
      changeReason: SYNC_ADDED,
    });
    await store.putItem(record(documentId, sha256));
    return 'created';
  }

  return {
    async syncItem(ctx, source, reader, entry, known) {
      if (known && known.sha256 !== null && sameListing(entry, known)) return 'unchanged';
      if (entry.sizeBytes !== null && entry.sizeBytes > deps.maxUploadBytes) {
        throw new KbError(
          'payload-too-large',
          `The item is ${entry.sizeBytes} bytes; the limit is ${deps.maxUploadBytes} bytes.`,
        );
      }
      const content = await reader.read(entry, known);
      if (content === 'not-modified' && known && known.sha256 !== null) return 'unchanged';
      if (content === 'not-modified')
        throw new KbError('source-unreachable', 'The source answered "not modified" for an item it never sent.');
      deps.reading.add(content);
      try {
        if (deps.closed()) throw new RunLeft();
        return await writeItem(ctx, source, entry, known, content);
      } finally {
        deps.reading.delete(content);
        content.close?.();
      }
    },

    async removeGone(ctx, source, run, gone, total, counts, errors, listingCapped) {
      if (gone.length === 0) return;
      if (listingCapped) {
        counts.deletionsHeld = gone.length;
        errors.unshift({
          item: null,
          code: 'deletions-held',
          detail: `The listing stopped at its cap, so ${gone.length} of the source's ${total} documents that it did not reach were kept; none was deleted.`,
        });
        return;
      }
      if (!run.allowMassDelete && gone.length > deps.maxDeleteFraction * total) {
        counts.deletionsHeld = gone.length;
        errors.unshift({
          item: null,
          code: 'deletions-held',
          detail: `${gone.length} of the source's ${total} documents are gone at the source, more than the fraction ${deps.maxDeleteFraction} (KB_SOURCE_MAX_DELETE_FRACTION); none was deleted. Sync with allow_mass_delete=true to delete them.`,
        });
        return;
      }
      for (const item of gone) {
        try {
          await documentWrites.remove(ctx, item.documentId, { purge: false });
        } catch (error) {
          // Deleted already (by hand, or by this run before a crash): the item only goes.
          if (!(error instanceof KbError && error.code === 'not-found')) throw error;
        }
        await store.deleteItem(source.id, item.itemKey);
        counts.deleted++;
      }
    },
  };
}
