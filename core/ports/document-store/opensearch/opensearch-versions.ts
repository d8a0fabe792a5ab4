import { KbError } from '../../../errors/kb-error.ts';
import type {
  DocumentRecord,
  IndexModel,
  VersionRecord,
  VersionStatus,
} from '../../../model/document-records.model.ts';
import { VERSION_STATUSES } from '../../../model/document-records.model.ts';
import type {
  ChunkInput,
  CompletionOutcome,
  CompletionResult,
  DocumentListQuery,
  DocumentStore,
  NewDocument,
  NotificationDraft,
  RecordedWrite,
  VersionPatch,
  VersionStore,
} from '../document-store.port.ts';
import { canonicalTime, toStoredProgress, toVersionRecord } from '../stored-records.ts';
import { createChunkWriter, type KnownSources } from './opensearch-chunks.ts';
import { BY_CHUNK_ID, backoff, type Guarded, INDEX_MODEL_ID, type OpenSearchContext } from './opensearch-context.ts';
import type { Json } from './opensearch-http.ts';
import {
  type DocumentSource,
  later,
  newVersionSource,
  type OutboxSource,
  toDocumentRecord,
  type VersionSource,
  versionId,
  versionIdsUpTo,
} from './opensearch-records.ts';
import { completionUpdate, createServing, lastServed } from './opensearch-serving.ts';

/**
 * The {@link VersionStore} role of the OpenSearch document store. The document record decides
 * (version allocation, serving history) under sequence-number guards; versions and chunks receive
 * copies of what it decided.
 */
export function createOpenSearchVersionStore(
  context: OpenSearchContext,
  changeMark: () => string,
): Omit<VersionStore, 'lookupSourceItems'> & Pick<DocumentStore, 'completeVersionWithChunks'> {
  const {
    http,
    names,
    resultWindow,
    refreshQuery,
    path,
    getGuarded,
    getDocument,
    getGuardedMany,
    getVersionSource,
    put,
    update,
    updateAndGet,
    mget,
    search,
    count,
    deleteMatching,
    deleteIds,
    refreshIndexes,
  } = context;
  const { propagate, mirrorStatus, advanceLatest } = createServing(context);
  const { putChunks } = createChunkWriter(context);

  /**
   * Writes to the outbox index, before a purge removes anything, the notification the document held
   * and the purge's own. Each is created only if absent: a purge retried after one cut off keeps
   * the first one's notification (its draft is not called again).
   */
  async function keepNotifications(document: DocumentSource, notify: NotificationDraft): Promise<void> {
    const entry = (id: string, at: string, body: string): OutboxSource => ({
      id,
      workspace_id: document.workspace_id,
      document_id: document.id,
      at,
      body,
    });
    const held = document.notification;
    if (held !== undefined && held !== null) {
      await put(names.outbox, `${document.id}:held`, entry(held.id, held.at, held.body), 'create', 'later');
    }
    const purgeId = `${document.id}:purge`;
    if (await getGuarded(names.outbox, purgeId)) return;
    const latest = await getVersionSource(document.id, document.latest_version);
    if (latest === null) return;
    const notification = notify(toDocumentRecord(document, latest));
    await put(
      names.outbox,
      purgeId,
      entry(notification.id, new Date().toISOString(), notification.body),
      'create',
      'later',
    );
  }

  async function listDocuments(query: DocumentListQuery): Promise<{ documents: DocumentRecord[]; total: number }> {
    const filter: Json[] = [
      { term: { workspace_id: query.workspaceId } },
      { bool: { must_not: [{ exists: { field: 'deleted_at' } }] } },
    ];
    if (query.status !== undefined) filter.push({ term: { status: query.status } });
    if (query.source !== undefined) filter.push({ term: { source: query.source } });
    const created: Json = {};
    if (query.createdAfter !== undefined) created.gte = canonicalTime(query.createdAfter, 'createdAfter');
    if (query.createdBefore !== undefined) created.lt = canonicalTime(query.createdBefore, 'createdBefore');
    if (Object.keys(created).length > 0) filter.push({ range: { created_at: created } });
    // The total counts the whole filtered list, whatever the cursor or offset.
    const total = query.knownTotal ?? (await count(names.documents, { bool: { filter } }));

    const page = [...filter];
    if (query.after !== undefined) {
      const createdAt = canonicalTime(query.after.createdAt, 'after.createdAt');
      page.push({
        bool: {
          should: [
            { range: { created_at: { lt: createdAt } } },
            { bool: { filter: [{ term: { created_at: createdAt } }, { range: { id: { lt: query.after.id } } }] } },
          ],
          minimum_should_match: 1,
        },
      });
    }
    const limit = Math.min(resultWindow, Math.max(0, Math.floor(query.limit)));
    const offset = Math.max(0, Math.floor(query.offset ?? 0));
    if (limit === 0 || offset >= total) return { documents: [], total };
    const base: Json = { query: { bool: { filter: page } }, sort: [{ created_at: 'desc' }, { id: 'desc' }] };
    let searchAfter: readonly unknown[] | undefined;
    let from = offset;
    // Beyond the result window, walk to the offset by sort values first (`search_after` needs `from: 0`).
    while (from > 0 && offset + limit > resultWindow) {
      const size = Math.min(resultWindow, from);
      const skipped = await search<never>(names.documents, {
        ...base,
        size,
        _source: false,
        ...(searchAfter === undefined ? {} : { search_after: searchAfter }),
      });
      const last = skipped.hits.hits[skipped.hits.hits.length - 1];
      if (skipped.hits.hits.length < size || last?.sort === undefined) return { documents: [], total };
      searchAfter = last.sort;
      from -= size;
    }
    const body = await search<DocumentSource>(names.documents, {
      ...base,
      from,
      size: limit,
      ...(searchAfter === undefined ? {} : { search_after: searchAfter }),
    });
    const sources = body.hits.hits.flatMap((hit) => (hit._source === undefined ? [] : [hit._source]));
    const latest = await mget<VersionSource>(
      names.versions,
      sources.map((source) => versionId(source.id, source.latest_version)),
    );
    const documents = sources.flatMap((source) => {
      const version = latest.get(versionId(source.id, source.latest_version));
      return version === undefined ? [] : [toDocumentRecord(source, version)];
    });
    return { documents, total };
  }

  /**
   * Completes a version, writing `chunks` first when given. The document record decides the
   * serving first; the chunks are then written with the served interval it gave them (a chunk
   * written before the decision would have to be rewritten, which for a k-NN index means indexing
   * its vector again), the previously served version's chunks are closed by id, and the version
   * record takes its completion and served interval in one write.
   */
  async function complete(
    documentId: string,
    version: number,
    result: CompletionResult,
    chunks: readonly ChunkInput[] | null,
  ): Promise<CompletionOutcome> {
    const at = canonicalTime(result.at, 'at');
    let written = chunks === null || chunks.length === 0;
    const withVectors = chunks?.some((chunk) => chunk.vector) ?? false;
    // Served chunks written here are refreshed below, together with the closing of the previous
    // version's chunks (or by the caller's next search, for chunks that are not served).
    const writeChunks = async (known: KnownSources): Promise<void> => {
      if (written || chunks === null) return;
      await putChunks(chunks, false, known);
      written = true;
    };
    for (let attempt = 0; ; attempt += 1) {
      // The version, the document and (for chunks with vectors) the index model, in one request.
      const [versionHit, document, modelHit] = (await getGuardedMany([
        { index: names.versions, id: versionId(documentId, version) },
        { index: names.documents, id: documentId },
        ...(withVectors ? [{ index: names.meta, id: INDEX_MODEL_ID }] : []),
      ])) as [Guarded<VersionSource> | null, Guarded<DocumentSource> | null, Guarded<IndexModel> | null | undefined];
      const model = modelHit ? { model: modelHit.source.model, dimensions: modelHit.source.dimensions } : null;
      const current = versionHit?.source ?? null;
      if (current === null || current.status === 'completed') {
        await writeChunks({ model });
        if (current === null) return { served: false, completed: null };
        // A completion cut off after it marked the version (its process killed, the engine stopping)
        // left the document's copy of the status behind: copied now (nothing is written when it is there).
        await mirrorStatus(documentId, version, at, 'own-reads');
        return {
          served: current.served_from !== null,
          completed: {
            name: current.name,
            completedAt: current.completed_at ?? at,
            source: document?.source.source ?? '',
          },
        };
      }
      if (document === null) {
        await writeChunks({ model });
        return { served: false, completed: null };
      }
      let source = document.source;
      /** The document as this completion wrote it, with the guard of that write. */
      let ownWrite: Guarded<DocumentSource> | null = null;
      // Already in the serving history: an interrupted completion, finished below.
      let served = source.served.some((entry) => entry.version === version);
      if (
        !served &&
        source.deleted_at === null &&
        (source.served_version === null || source.served_version < version)
      ) {
        const previous = source.served[source.served.length - 1];
        const next: DocumentSource = {
          ...source,
          served: [...source.served, { version, from: later(at, previous?.from ?? null) }],
          served_version: version,
          rev: source.rev + 1,
        };
        const guard = await put(names.documents, documentId, next, document, 'later');
        if (!guard) {
          await backoff(attempt, `complete ${versionId(documentId, version)}`);
          continue;
        }
        source = next;
        ownWrite = { source: next, ...guard };
        served = true;
      }
      // Chunks written now copy the serving just decided (and are copied again should it change
      // while they are written), so only chunks written before need the copy below.
      const writesNow = !written;
      // The document as this completion left it, the version and the index model as read above
      // (the fields the chunks copy from the version are fixed when it is created): the writer
      // need not read them again.
      await writeChunks({
        documents: new Map([[documentId, source]]),
        versions: new Map([[versionId(documentId, version), current]]),
        model,
      });
      if (served) {
        // The served interval is copied onto the chunks by id (`0 … chunkCount-1`), so the
        // chunks written a moment ago need no refresh before the copy.
        const position = source.served.findIndex((entry) => entry.version === version);
        const previous = source.served[position - 1];
        await propagate(
          source,
          previous === undefined ? [version] : [previous.version, version],
          'later',
          new Map([[version, result.chunkCount]]),
          { version, chunksWritten: writesNow },
        );
        // One refresh of the chunks before the version says `completed`: a reader that sees the
        // status (lookups by id are real-time) finds the chunks in search too. The versions'
        // served intervals are searched only by retention, which refreshes them first.
        await context.refreshChunks();
      }
      await update(
        names.versions,
        versionId(documentId, version),
        completionUpdate(source, version, {
          status: 'completed',
          completed_at: at,
          chunk_count: result.chunkCount,
          tokens: result.tokens,
          embedding_model: result.embeddingModel,
          error: null,
        }),
        'later',
      );
      // The status and the serving history reach this instance's `listDocuments` at once (it
      // refreshes the documents index before its next list) and other instances' with the index's
      // next periodic refresh: the stage does not wait for it. When there is nothing to mirror (an
      // older version completed), the serving change alone is refreshed.
      const mirrored = await mirrorStatus(
        documentId,
        version,
        at,
        'own-reads',
        ownWrite === null ? undefined : { document: ownWrite, status: 'completed' },
      );
      if (!mirrored && source !== document.source) await refreshIndexes([names.documents]);
      return { served, completed: { name: current.name, completedAt: at, source: source.source } };
    }
  }

  return {
    changeMark,

    async createDocument(input: NewDocument): Promise<DocumentRecord> {
      const version = newVersionSource(input.id, input.workspaceId, 1, input.firstVersion);
      const conflict = () =>
        new KbError('conflict', `Document ${input.id} already exists`, {
          retriable: false,
        });
      // Versions are read by id only (real-time): no refresh.
      if (!(await put(names.versions, versionId(input.id, 1), version, 'create', 'later'))) throw conflict();
      const document: DocumentSource = {
        id: input.id,
        workspace_id: input.workspaceId,
        source: input.source,
        source_item: input.sourceItem ?? null,
        created_at: version.created_at,
        updated_at: version.created_at,
        deleted_at: null,
        latest_version: 1,
        served_version: null,
        status: 'pending',
        rev: 1,
        served: [],
      };
      // Shown to this instance's lists at once (its next list refreshes first), to other
      // instances' with the documents index's next periodic refresh: no refresh per upload.
      if (!(await put(names.documents, input.id, document, 'create', 'own-reads'))) {
        // A document record without its version 1 (an interrupted purge): leave it, drop ours.
        await http.request('DELETE', path(names.versions, '_doc', versionId(input.id, 1)), undefined, {
          query: refreshQuery,
          allow: [404],
        });
        throw conflict();
      }
      return toDocumentRecord(document, version);
    },

    async appendVersion(workspaceId, documentId, build): Promise<VersionRecord> {
      for (let attempt = 0; ; attempt += 1) {
        const document = await getDocument(documentId);
        if (document === null || document.source.workspace_id !== workspaceId || document.source.deleted_at !== null) {
          throw new KbError('not-found', `Document ${documentId} not found`);
        }
        const latest = await getVersionSource(documentId, document.source.latest_version);
        if (latest === null) throw new KbError('not-found', `Document ${documentId} has no versions`);
        const next = document.source.latest_version + 1;
        const source = newVersionSource(documentId, workspaceId, next, build(toVersionRecord(latest)));
        if (await put(names.versions, versionId(documentId, next), source, 'create', 'later')) {
          await advanceLatest(documentId, source);
          return toVersionRecord(source);
        }
        // Another append took `next`: advance the document for it, then try the number after.
        const taken = await getVersionSource(documentId, next);
        if (taken !== null) await advanceLatest(documentId, taken);
        await backoff(attempt, `append to ${documentId}`);
      }
    },

    async getDocumentAndVersion(workspaceId, documentId, version) {
      // One request for both records (lookups by id, real-time).
      const [documentHit, versionHit] = (await getGuardedMany([
        { index: names.documents, id: documentId },
        { index: names.versions, id: versionId(documentId, version) },
      ])) as [Guarded<DocumentSource> | null, Guarded<VersionSource> | null];
      const document = documentHit?.source ?? null;
      const asked = versionHit?.source ?? null;
      const versionRecord = asked === null ? null : toVersionRecord(asked);
      if (document === null || document.workspace_id !== workspaceId || document.deleted_at !== null) {
        return { document: null, version: versionRecord };
      }
      const latest =
        document.latest_version === version ? asked : await getVersionSource(documentId, document.latest_version);
      return { document: latest === null ? null : toDocumentRecord(document, latest), version: versionRecord };
    },

    async getDocument(workspaceId, documentId) {
      const document = await getDocument(documentId);
      if (document === null || document.source.workspace_id !== workspaceId || document.source.deleted_at !== null) {
        return null;
      }
      const latest = await getVersionSource(documentId, document.source.latest_version);
      return latest === null ? null : toDocumentRecord(document.source, latest);
    },

    listDocuments,

    async listVersions(workspaceId, documentId) {
      // By id (real-time): versions 1 … latest of the document, so a status patch or a new
      // version shows at once without any refresh.
      const document = await getDocument(documentId);
      if (document === null || document.source.workspace_id !== workspaceId) return [];
      const ids = versionIdsUpTo(documentId, document.source.latest_version);
      const found = await mget<VersionSource>(names.versions, ids);
      return ids
        .flatMap((id) => {
          const source = found.get(id);
          return source === undefined || source.workspace_id !== workspaceId ? [] : [toVersionRecord(source)];
        })
        .reverse();
    },

    async getVersion(documentId, version) {
      const source = await getVersionSource(documentId, version);
      return source === null ? null : toVersionRecord(source);
    },

    async updateVersion(documentId, version, patch: VersionPatch) {
      const fields: Json = {};
      if (patch.status !== undefined) fields.status = patch.status;
      if (patch.error !== undefined) fields.error = patch.error;
      if (patch.progress !== undefined) fields.progress = toStoredProgress(patch.progress);
      if (patch.chunkCount !== undefined) fields.chunk_count = patch.chunkCount;
      if (patch.tokens !== undefined) fields.tokens = patch.tokens;
      if (patch.embeddingModel !== undefined) fields.embedding_model = patch.embeddingModel;
      if (Object.keys(fields).length === 0) {
        const current = await getVersionSource(documentId, version);
        return current === null ? null : toVersionRecord(current);
      }
      // Lookups by id of a record changed since the last refresh cost the engine a refresh of
      // their own, so the update answers the new record itself instead of reads around it. The
      // version record is read by id only (`getVersion`, `listVersions`), so it needs no refresh.
      const id = versionId(documentId, version);
      const answered = await updateAndGet<VersionSource>(names.versions, id, { doc: fields }, 'later');
      if (answered === null) return null;
      // mirrorStatus copies the status onto the document only where it differs. `listDocuments`
      // (a search) of this instance refreshes the documents index first; another instance's sees
      // the copy with the index's next periodic refresh, which the stage does not wait for.
      if (patch.status !== undefined) {
        await mirrorStatus(documentId, version, new Date().toISOString(), 'own-reads');
      }
      return toVersionRecord(answered);
    },

    completeVersion: (documentId, version, result) => complete(documentId, version, result, null),

    completeVersionWithChunks: (documentId, version, chunks, result) => complete(documentId, version, result, chunks),

    async softDelete(workspaceId, documentId, at, writeKey, notify) {
      const when = canonicalTime(at, 'at');
      for (let attempt = 0; ; attempt += 1) {
        const document = await getDocument(documentId);
        if (document === null || document.source.workspace_id !== workspaceId) return null;
        if (document.source.deleted_at !== null) {
          // Finishes an interrupted deletion (the copies are idempotent), then answers it as it was deleted.
          await propagate(document.source, lastServed(document.source));
          const latest = await getVersionSource(documentId, document.source.latest_version);
          return latest === null ? null : toDocumentRecord(document.source, latest);
        }
        let next: DocumentSource = {
          ...document.source,
          deleted_at: when,
          updated_at: when,
          served_version: null,
          deleted_by: writeKey ?? null,
          rev: document.source.rev + 1,
        };
        if (notify !== undefined) {
          // Made from the latest version as the guard below holds it (an append changes the
          // document record), and written in the same record as the deletion.
          const latest = await getVersionSource(documentId, next.latest_version);
          if (latest === null) return null;
          const notification = notify(toDocumentRecord(next, latest));
          next = { ...next, notification: { id: notification.id, at: when, body: notification.body } };
        }
        if (!(await put(names.documents, documentId, next, document))) {
          await backoff(attempt, `delete ${documentId}`);
          continue;
        }
        await propagate(next, lastServed(next));
        const latest = await getVersionSource(documentId, next.latest_version);
        return latest === null ? null : toDocumentRecord(next, latest);
      }
    },

    async findWrite(workspaceId, writeKey): Promise<RecordedWrite | null> {
      // Searches, so both indexes are refreshed first (the records are written without a refresh):
      // only a request that resumes one cut off asks, which is rare.
      await refreshIndexes([names.documents, names.versions]);
      const byKey = (field: string) => ({
        bool: { filter: [{ term: { [field]: writeKey } }, { term: { workspace_id: workspaceId } }] },
      });
      const deletions = await search<DocumentSource>(names.documents, {
        size: 1,
        query: byKey('deleted_by'),
        sort: [{ deleted_at: 'desc' }, { id: 'desc' }],
      });
      const deletion = deletions.hits.hits[0]?._source;
      if (deletion !== undefined)
        return { kind: 'deletion', documentId: deletion.id, version: deletion.latest_version };
      const versions = await search<VersionSource>(names.versions, {
        size: 10,
        query: byKey('write_key'),
        sort: [{ created_at: 'desc' }, { version: 'desc' }],
      });
      for (const hit of versions.hits.hits) {
        const source = hit._source;
        if (source === undefined) continue;
        // A version 1 whose document was never recorded (a creation cut off half-way) is no write.
        const document = await getDocument(source.document_id);
        if (document === null || document.source.workspace_id !== workspaceId) continue;
        // An append cut off before it advanced the document: finished, as the next append would.
        if (document.source.latest_version < source.version) await advanceLatest(source.document_id, source);
        return { kind: 'version', documentId: source.document_id, version: source.version };
      }
      return null;
    },

    async purge(workspaceId, documentId, notify) {
      const document = await getDocument(documentId);
      if (document === null || document.source.workspace_id !== workspaceId) return false;
      if (notify !== undefined) await keepNotifications(document.source, notify);
      const byDocument = { term: { document_id: documentId } };
      await deleteMatching(names.chunks, byDocument, BY_CHUNK_ID);
      // By id: versions are written without a refresh, so a search could miss the newest. One past
      // the latest too: an append interrupted before it advanced the document left it.
      await deleteIds(names.versions, versionIdsUpTo(documentId, document.source.latest_version + 1));
      await http.request('DELETE', path(names.documents, '_doc', documentId), undefined, {
        query: refreshQuery,
        allow: [404],
      });
      return true;
    },

    async countDocumentsByStatus() {
      const body = await search<never>(names.documents, {
        size: 0,
        query: { bool: { must_not: [{ exists: { field: 'deleted_at' } }] } },
        aggs: { statuses: { terms: { field: 'status', size: VERSION_STATUSES.length } } },
      });
      const buckets = (body.aggregations?.statuses as { buckets: { key: string; doc_count: number }[] } | undefined)
        ?.buckets;
      const counts = Object.fromEntries(VERSION_STATUSES.map((s) => [s, 0])) as Record<VersionStatus, number>;
      for (const bucket of buckets ?? []) {
        if (bucket.key in counts) counts[bucket.key as VersionStatus] = bucket.doc_count;
      }
      return counts;
    },
  };
}
