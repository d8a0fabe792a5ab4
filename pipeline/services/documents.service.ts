import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { v7 as uuidv7 } from 'uuid';
import { KbError } from '../errors/kb-error.ts';
import type { DocumentUploaded, Topics } from '../events/events.ts';
import { createContentSniffer, detectType } from '../parsing/detect-type.ts';
import { ALLOWED_MIME_TYPES } from '../parsing/parsed-document.ts';
import type { AuditAction, ControlStore } from '../ports/control-store/control-store.port.ts';
import type {
  ChunkRecord,
  DocumentListQuery,
  DocumentRecord,
  DocumentStore,
  Metadata,
  VersionRecord,
} from '../ports/document-store/document-store.port.ts';
import type { MessageLog } from '../ports/message-log/message-log.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';
import { decodeCursor, encodeCursor } from '../util/cursor.ts';
import { storageKeys } from '../util/storage-keys.ts';
import { isoNow } from '../util/time.ts';
import { diffChunks } from './chunk-diff.ts';
import { chunkView, documentView, listItemView, versionDetailView, versionView } from './document-views.ts';
import { createListTotalCache } from './list-total-cache.ts';
import type { DocumentsService, RequestContext } from './services.ts';
import type { ContextView, ContextWindowView } from './views.ts';

export interface DocumentsServiceDeps {
  readonly documents: DocumentStore;
  readonly objects: ObjectStore;
  readonly control: ControlStore;
  readonly log: MessageLog;
  readonly topics: Topics;
  readonly maxUploadBytes: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notFound = (documentId: string) => new KbError('not-found', `Document ${documentId} was not found.`);

type CursorPosition = { c: string; i: string };
const isPosition = (v: unknown): v is CursorPosition =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as CursorPosition).c === 'string' &&
  typeof (v as CursorPosition).i === 'string';
const isIndexCursor = (v: unknown): v is { a: number } =>
  typeof v === 'object' && v !== null && Number.isInteger((v as { a: number }).a);

export function createDocumentsService(deps: DocumentsServiceDeps): DocumentsService {
  const { documents, objects, control, log, topics } = deps;
  const totals = createListTotalCache();

  /** The store's list under `filters`, counting the total only when the change mark moved since. */
  async function listPage(
    filters: Omit<DocumentListQuery, 'limit' | 'after' | 'offset' | 'knownTotal'>,
    page: Pick<DocumentListQuery, 'limit' | 'after' | 'offset'>,
  ): Promise<{ documents: DocumentRecord[]; total: number }> {
    // Read before the list: a write landing meanwhile moves the mark, so nothing older is kept under it.
    const mark = documents.changeMark();
    const knownTotal = totals.get(filters, mark);
    const result = await documents.listDocuments({
      ...filters,
      ...page,
      ...(knownTotal !== undefined ? { knownTotal } : {}),
    });
    if (knownTotal === undefined) totals.set(filters, mark, result.total);
    return result;
  }

  async function loadDocument(ctx: RequestContext, documentId: string): Promise<DocumentRecord> {
    if (!UUID.test(documentId)) throw notFound(documentId);
    const doc = await documents.getDocument(ctx.workspaceId, documentId);
    if (!doc) throw notFound(documentId);
    return doc;
  }

  async function loadVersion(ctx: RequestContext, documentId: string, version: number): Promise<VersionRecord> {
    await loadDocument(ctx, documentId);
    const record = await documents.getVersion(documentId, version);
    if (!record || record.workspaceId !== ctx.workspaceId) {
      throw new KbError('not-found', `Version ${version} of document ${documentId} was not found.`);
    }
    return record;
  }

  async function audit(
    ctx: RequestContext,
    action: AuditAction,
    documentId: string,
    version: number | null,
    before: VersionRecord | null,
    after: VersionRecord | null,
    changeReason: string | null,
  ): Promise<void> {
    await control.appendAudit({
      id: uuidv7(),
      action,
      workspaceId: ctx.workspaceId,
      documentId,
      actor: { type: ctx.actorType ?? 'api_key', id: ctx.keyId },
      timestamp: isoNow(),
      version,
      before: before ? { version: before.version, metadata: before.metadata } : null,
      after: after ? { version: after.version, metadata: after.metadata } : null,
      changeReason,
      traceId: ctx.traceId,
    });
  }

  async function publishUploaded(ctx: RequestContext, v: VersionRecord): Promise<void> {
    const event: DocumentUploaded = {
      event_id: uuidv7(),
      occurred_at: isoNow(),
      trace_id: ctx.traceId,
      document_id: v.documentId,
      workspace_id: v.workspaceId,
      version: v.version,
      storage_key: v.storageKey,
      mime_type: v.mimeType,
      size_bytes: v.sizeBytes,
      content_hash: v.contentHash,
      name: v.name,
    };
    await log.publish(topics.uploaded, [{ key: v.documentId, value: event as unknown as Record<string, unknown> }]);
  }

  /**
   * Serves a new version from an existing version's chunks and vectors (metadata change,
   * rollback) when they are all there; returns false when the pipeline must run instead.
   */
  async function completeFromExisting(source: VersionRecord, target: VersionRecord): Promise<boolean> {
    if (source.status !== 'completed' || source.archivedAt !== null || source.chunkCount === 0) return false;
    const model = await documents.getIndexModel();
    if (!model || source.embeddingModel !== model.model) return false;
    if (!(await documents.hasVectors(source.documentId, source.version))) return false;
    const parsedFrom = storageKeys.parsed(source.workspaceId, source.documentId, source.version);
    const parsedTo = storageKeys.parsed(target.workspaceId, target.documentId, target.version);
    if (!(await objects.stat(parsedFrom))) return false;
    await objects.put(parsedTo, await objects.get(parsedFrom), { contentType: 'application/json' });
    const copied = await documents.copyChunks(source.documentId, source.version, target.version);
    if (copied !== source.chunkCount) return false;
    await documents.completeVersion(target.documentId, target.version, {
      at: isoNow(),
      chunkCount: source.chunkCount,
      tokens: source.tokens,
      embeddingModel: source.embeddingModel,
    });
    return true;
  }

  /**
   * The document as a write left it: the version that write created, even when a concurrent
   * write has already appended a newer one (its response must still say `version` = M+1).
   */
  async function viewAt(ctx: RequestContext, documentId: string, version: number) {
    const doc = await loadDocument(ctx, documentId);
    const record = version === doc.latestVersion ? doc.latest : await documents.getVersion(documentId, version);
    return documentView(record ? { ...doc, latestVersion: version, latest: record } : doc, objects);
  }

  async function allChunks(documentId: string, version: number): Promise<ChunkRecord[]> {
    const out: ChunkRecord[] = [];
    let afterIndex = -1;
    for (;;) {
      const page = await documents.listChunks(documentId, version, { afterIndex, limit: 1000 });
      out.push(...page.chunks);
      if (page.chunks.length < 1000) return out;
      afterIndex = (page.chunks.at(-1) as ChunkRecord).index;
    }
  }

  return {
    async stageUpload({ workspaceId, documentId = uuidv7(), stream, filename, declaredType }) {
      const key = storageKeys.upload(workspaceId, documentId, uuidv7());
      const hash = createHash('sha256');
      const sniffer = createContentSniffer();
      const limit = deps.maxUploadBytes;
      let size = 0;
      // Counts, hashes and sniffs on the way to storage. Past the limit it stops forwarding but
      // keeps reading, so the client gets the real size and the request is consumed cleanly.
      const inspect = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          size += chunk.length;
          if (size > limit) {
            callback();
            return;
          }
          hash.update(chunk);
          sniffer.update(chunk);
          callback(null, chunk);
        },
        flush(callback) {
          callback(
            size > limit
              ? new KbError('payload-too-large', `The file is ${size} bytes; the limit is ${limit} bytes.`)
              : null,
          );
        },
      });
      try {
        await Promise.all([objects.put(key, inspect), pipeline(stream, inspect)]);
      } catch (error) {
        await objects.delete(key).catch(() => {});
        if (size > limit) {
          throw new KbError('payload-too-large', `The file is ${size} bytes; the limit is ${limit} bytes.`);
        }
        throw error;
      }
      const discard = () => objects.delete(key).catch(() => {});
      if (size === 0) {
        await discard();
        throw new KbError('empty-file', 'The file is empty.');
      }
      const sniff = sniffer.finish();
      const hints = { declaredType, filename };
      const detection = detectType(sniff.head, hints, {
        utf8Valid: sniff.utf8Valid,
        hasNul: sniff.hasNul,
        jsonValid: sniff.jsonValid,
      });
      if ('rejected' in detection || 'needsJsonCheck' in detection) {
        await discard();
        const type = 'rejected' in detection ? detection.rejected : 'unknown';
        throw new KbError(
          'unsupported-type',
          `Unsupported file type ${type}. Allowed types: ${ALLOWED_MIME_TYPES.join(', ')}.`,
        );
      }
      return {
        documentId,
        storageKey: key,
        sizeBytes: size,
        contentHash: hash.digest('hex'),
        mimeType: detection.mimeType,
        name: filename || 'upload',
      };
    },

    async discardUpload(staged) {
      await objects.delete(staged.storageKey);
    },

    async create(ctx, { staged, metadata, source, changeReason }) {
      const now = isoNow();
      let doc: DocumentRecord;
      try {
        doc = await documents.createDocument({
          id: staged.documentId,
          workspaceId: ctx.workspaceId,
          source,
          firstVersion: {
            name: staged.name,
            mimeType: staged.mimeType,
            sizeBytes: staged.sizeBytes,
            contentHash: staged.contentHash,
            storageKey: staged.storageKey,
            metadata,
            changeReason,
            restoredFrom: null,
            createdBy: ctx.keyId,
            createdAt: now,
          },
        });
      } catch (error) {
        await objects.delete(staged.storageKey).catch(() => {});
        throw error;
      }
      try {
        await publishUploaded(ctx, doc.latest);
      } catch (error) {
        // Nothing half-written: without its event the document would stay pending forever.
        await documents.purge(ctx.workspaceId, doc.id).catch(() => {});
        await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, doc.id)).catch(() => {});
        throw error;
      }
      await audit(ctx, 'create', doc.id, 1, null, doc.latest, changeReason);
      return {
        document_id: doc.id,
        name: doc.latest.name,
        workspace_id: doc.workspaceId,
        storage_url: objects.url(staged.storageKey),
        mime_type: doc.latest.mimeType,
        size_bytes: doc.latest.sizeBytes,
        content_hash: doc.latest.contentHash,
        status: 'pending',
        version: 1,
        message: 'Document uploaded and queued for processing.',
      };
    },

    async replaceContent(ctx, documentId, { staged, metadata, changeReason }) {
      let before: VersionRecord | null = null;
      let created: VersionRecord;
      try {
        await loadDocument(ctx, documentId);
        created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
          before = latest;
          return {
            name: staged.name,
            mimeType: staged.mimeType,
            sizeBytes: staged.sizeBytes,
            contentHash: staged.contentHash,
            storageKey: staged.storageKey,
            metadata: metadata ?? latest.metadata,
            changeReason,
            restoredFrom: null,
            createdBy: ctx.keyId,
            createdAt: isoNow(),
          };
        });
      } catch (error) {
        await objects.delete(staged.storageKey).catch(() => {});
        throw error;
      }
      await publishUploaded(ctx, created);
      await audit(ctx, 'update', documentId, created.version, before, created, changeReason);
      return viewAt(ctx, documentId, created.version);
    },

    async patchMetadata(ctx, documentId, { metadata, changeReason }) {
      await loadDocument(ctx, documentId);
      let before: VersionRecord | null = null;
      const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
        before = latest;
        return {
          name: latest.name,
          mimeType: latest.mimeType,
          sizeBytes: latest.sizeBytes,
          contentHash: latest.contentHash,
          storageKey: latest.storageKey,
          metadata,
          changeReason,
          restoredFrom: null,
          createdBy: ctx.keyId,
          createdAt: isoNow(),
        };
      });
      const source = before as VersionRecord | null;
      if (!source || !(await completeFromExisting(source, created))) await publishUploaded(ctx, created);
      await audit(ctx, 'update', documentId, created.version, source, created, changeReason);
      return viewAt(ctx, documentId, created.version);
    },

    async get(ctx, documentId) {
      return documentView(await loadDocument(ctx, documentId), objects);
    },

    listChangeMark() {
      return documents.changeMark();
    },

    async list(ctx, query) {
      if (query.cursor !== undefined && (query.page !== undefined || query.pageSize !== undefined)) {
        throw new KbError(
          'bad-request',
          'Use either `cursor` (cursor paging) or `page`/`page_size` (offset paging), not both.',
        );
      }
      const filters = {
        workspaceId: ctx.workspaceId,
        ...(query.status ? { status: query.status } : {}),
        ...(query.source ? { source: query.source } : {}),
        ...(query.createdAfter ? { createdAfter: query.createdAfter } : {}),
        ...(query.createdBefore ? { createdBefore: query.createdBefore } : {}),
      };
      if (query.page !== undefined || query.pageSize !== undefined) {
        const page = query.page ?? 1;
        const pageSize = query.pageSize ?? 20;
        const result = await listPage(filters, { limit: pageSize, offset: (page - 1) * pageSize });
        return {
          mode: 'offset',
          documents: result.documents.map(listItemView),
          total: result.total,
          page,
          page_size: pageSize,
        };
      }
      const limit = query.limit ?? 20;
      const after = query.cursor ? decodeCursor(query.cursor, isPosition) : undefined;
      const result = await listPage(filters, {
        limit: limit + 1,
        ...(after ? { after: { createdAt: after.c, id: after.i } } : {}),
      });
      const page = result.documents.slice(0, limit);
      const last = page.at(-1);
      const hasMore = result.documents.length > limit;
      return {
        mode: 'cursor',
        documents: page.map(listItemView),
        pagination: {
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ c: last.createdAt, i: last.id }) : null,
          total: result.total,
        },
      };
    },

    async remove(ctx, documentId, { purge }) {
      if (!UUID.test(documentId)) throw notFound(documentId);
      const doc = await documents.getDocument(ctx.workspaceId, documentId);
      if (purge) {
        const versions = await documents.listVersions(ctx.workspaceId, documentId);
        const removed = await documents.purge(ctx.workspaceId, documentId);
        if (!removed) throw notFound(documentId);
        await objects.deletePrefix(storageKeys.documentPrefix(ctx.workspaceId, documentId));
        const latest = doc?.latest ?? versions[0] ?? null;
        await audit(ctx, 'purge', documentId, latest?.version ?? null, latest, null, null);
        return;
      }
      if (!doc) throw notFound(documentId);
      const deleted = await documents.softDelete(ctx.workspaceId, documentId, isoNow());
      if (!deleted) throw notFound(documentId);
      await audit(ctx, 'delete', documentId, doc.latestVersion, doc.latest, null, null);
    },

    async reprocess(ctx, documentId) {
      const doc = await loadDocument(ctx, documentId);
      const latest = await documents.updateVersion(documentId, doc.latestVersion, { status: 'pending', error: null });
      if (!latest) throw notFound(documentId);
      await publishUploaded(ctx, latest);
      return viewAt(ctx, documentId, latest.version);
    },

    async chunks(ctx, documentId, { version, cursor, limit }) {
      const doc = await loadDocument(ctx, documentId);
      const v = version ?? doc.servedVersion ?? doc.latestVersion;
      if (version !== undefined) await loadVersion(ctx, documentId, version);
      const afterIndex = cursor ? decodeCursor(cursor, isIndexCursor).a : -1;
      const page = await documents.listChunks(documentId, v, { afterIndex, limit });
      const last = page.chunks.at(-1);
      const hasMore = last !== undefined && page.chunks.length === limit && last.index < page.total - 1;
      return {
        document_id: documentId,
        version: v,
        chunks: page.chunks.map(chunkView),
        pagination: {
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ a: last.index }) : null,
          total: page.total,
        },
      };
    },

    async context(ctx, documentId, { version, chunkId, window }): Promise<ContextView | ContextWindowView> {
      const doc = await loadDocument(ctx, documentId);
      const v = version ?? doc.servedVersion ?? doc.latestVersion;
      const record = await loadVersion(ctx, documentId, v);
      if (chunkId !== undefined) {
        const chunk = await documents.getChunk(chunkId);
        if (!chunk || chunk.documentId !== documentId || chunk.workspaceId !== ctx.workspaceId) {
          throw new KbError('not-found', `Chunk ${chunkId} was not found in document ${documentId}.`);
        }
        const from = Math.max(0, chunk.index - window);
        const page = await documents.listChunks(documentId, chunk.version, {
          afterIndex: from - 1,
          limit: chunk.index + window - from + 1,
        });
        return {
          document_id: documentId,
          version: chunk.version,
          chunk_id: chunkId,
          window,
          chunks: page.chunks.map(chunkView),
        };
      }
      if (record.status !== 'completed') {
        throw new KbError('conflict', `Version ${v} is ${record.status}; its text is available once it is completed.`);
      }
      const parsedKey = storageKeys.parsed(record.workspaceId, documentId, v);
      let content: string;
      if (await objects.stat(parsedKey)) {
        content = (JSON.parse((await objects.getBuffer(parsedKey)).toString('utf8')) as { text: string }).text;
      } else {
        content = (await allChunks(documentId, v)).map((c) => c.content).join('\n\n');
      }
      return {
        document_id: documentId,
        version: v,
        content,
        tokens: record.tokens,
        chunk_count: record.chunkCount,
      };
    },

    async versions(ctx, documentId) {
      await loadDocument(ctx, documentId);
      const versions = await documents.listVersions(ctx.workspaceId, documentId);
      return { document_id: documentId, versions: versions.map(versionView) };
    },

    async version(ctx, documentId, version) {
      return versionDetailView(await loadVersion(ctx, documentId, version), objects);
    },

    async compare(ctx, documentId, from, to) {
      const [a, b] = [await loadVersion(ctx, documentId, from), await loadVersion(ctx, documentId, to)];
      for (const v of [a, b]) {
        if (v.archivedAt !== null) {
          throw new KbError('conflict', `Version ${v.version} is archived; its chunks are no longer indexed.`);
        }
        if (v.status !== 'completed') {
          throw new KbError('conflict', `Version ${v.version} is ${v.status}; versions compare once completed.`);
        }
      }
      const { diff, unchanged } = diffChunks(await allChunks(documentId, from), await allChunks(documentId, to));
      return {
        document_id: documentId,
        from_version: from,
        to_version: to,
        changes: {
          added_chunks: diff.filter((d) => d.type === 'added').length,
          removed_chunks: diff.filter((d) => d.type === 'removed').length,
          modified_chunks: diff.filter((d) => d.type === 'modified').length,
          unchanged_chunks: unchanged,
          diff,
        },
      };
    },

    async rollback(ctx, documentId, targetVersion) {
      const doc = await loadDocument(ctx, documentId);
      const target = await loadVersion(ctx, documentId, targetVersion);
      if (targetVersion === doc.latestVersion) {
        throw new KbError('conflict', `Version ${targetVersion} is already the current version.`);
      }
      let before: VersionRecord | null = null;
      const changeReason = `rollback to version ${targetVersion}`;
      const created = await documents.appendVersion(ctx.workspaceId, documentId, (latest) => {
        if (latest.version === targetVersion) {
          throw new KbError('conflict', `Version ${targetVersion} is already the current version.`);
        }
        before = latest;
        return {
          name: target.name,
          mimeType: target.mimeType,
          sizeBytes: target.sizeBytes,
          contentHash: target.contentHash,
          storageKey: target.storageKey,
          metadata: target.metadata,
          changeReason,
          restoredFrom: targetVersion,
          createdBy: ctx.keyId,
          createdAt: isoNow(),
        };
      });
      const completed = await completeFromExisting(target, created);
      if (!completed) await publishUploaded(ctx, created);
      await audit(ctx, 'rollback', documentId, created.version, before, created, changeReason);
      const now = await documents.getVersion(documentId, created.version);
      return {
        document_id: documentId,
        version: created.version,
        restored_from: targetVersion,
        status: now?.status ?? created.status,
      };
    },
  };
}

export type { Metadata };
