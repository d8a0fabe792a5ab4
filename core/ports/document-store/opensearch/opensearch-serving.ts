import type { VersionStatus } from '../../../model/document-records.model.ts';
import { backoff, type Guarded, type OpenSearchContext, type Visibility } from './opensearch-context.ts';
import type { Json } from './opensearch-http.ts';
import {
  type DerivedChunkFields,
  type DocumentSource,
  derivedChunkFields,
  servedInterval,
  type VersionSource,
  versionId,
} from './opensearch-records.ts';

/** Copies the served interval and version fields onto a chunk unless it holds a newer copy. */
const SYNC_CHUNK_SCRIPT = `
  def current = ctx._source.served_rev;
  if (current != null && current > params.rev) {
    ctx.op = 'noop';
  } else {
    for (def entry : params.fields.entrySet()) { ctx._source[entry.getKey()] = entry.getValue(); }
  }`;

/**
 * Copies the served interval onto a version unless it holds a newer copy, and sets `params.fields`
 * (a completion's fields, or none: then a version holding a newer copy is left untouched).
 */
const SYNC_VERSION_SCRIPT = `
  def current = ctx._source.served_rev;
  if (current != null && current > params.rev) {
    if (params.fields.isEmpty()) { ctx.op = 'noop'; }
  } else {
    ctx._source.served_from = params.from;
    ctx._source.served_until = params.until;
    ctx._source.served_rev = params.rev;
  }
  for (def entry : params.fields.entrySet()) { ctx._source[entry.getKey()] = entry.getValue(); }`;

/** The update that copies `document`'s served interval of `version` onto its record, with `fields`. */
function versionServedUpdate(document: DocumentSource, version: number, fields: Json = {}): Json {
  const interval = servedInterval(document, version);
  return {
    script: {
      lang: 'painless',
      source: SYNC_VERSION_SCRIPT,
      params: { rev: document.rev, from: interval.from, until: interval.until, fields },
    },
  };
}

/**
 * The update that completes version `version` with `fields`: when `document` serves the version,
 * its served interval is copied in the same write, so a completed version never shows without it.
 */
export function completionUpdate(document: DocumentSource, version: number, fields: Json): Json {
  if (!document.served.some((entry) => entry.version === version)) return { doc: fields };
  return versionServedUpdate(document, version, fields);
}

/** The version whose interval deletion closed: the last one of the serving history. */
export function lastServed(document: DocumentSource): number[] {
  const last = document.served[document.served.length - 1];
  return last === undefined ? [] : [last.version];
}

/**
 * Served state: copies from the document record (which decides) to its versions and chunks, and
 * the document's mirror of its latest version (number and status), each under a guard so that
 * concurrent writers never move it back.
 */
export function createServing(context: OpenSearchContext) {
  const { names, versionChunkIds, bulkUpdate, update, getDocument, getVersionSource, put } = context;

  /**
   * Copies a version's derived fields onto every chunk of it that exists now: chunks `0 … count-1`
   * by id when the version's chunk count is known, else every chunk a search finds.
   */
  async function syncChunks(
    documentId: string,
    version: number,
    fields: DerivedChunkFields,
    visibility: Visibility = 'now',
    count: number | null = null,
  ): Promise<void> {
    const ids = await versionChunkIds(documentId, version, count);
    const body = {
      script: { lang: 'painless', source: SYNC_CHUNK_SCRIPT, params: { rev: fields.served_rev, fields } },
    };
    await bulkUpdate(
      names.chunks,
      ids.map((id) => ({ id, body })),
      `sync chunks of ${versionId(documentId, version)}`,
      visibility,
    );
  }

  /**
   * Copies the served intervals of `versions` from the document onto their version and chunk
   * records. `chunkCounts` gives a version's chunk count where its record does not have it yet
   * (a version being completed); a completed version's record has it. The version being
   * `completing` is left to its completion's own write ({@link completionUpdate}), and its chunks
   * too when they were just written with these fields.
   */
  async function propagate(
    document: DocumentSource,
    versions: readonly number[],
    visibility: Visibility = 'now',
    chunkCounts: ReadonlyMap<number, number> = new Map(),
    completing: { readonly version: number; readonly chunksWritten: boolean } | null = null,
  ): Promise<void> {
    for (const version of new Set(versions)) {
      const own = completing !== null && completing.version === version;
      if (!own) {
        await update(
          names.versions,
          versionId(document.id, version),
          versionServedUpdate(document, version),
          visibility,
        );
      }
      if (own && completing.chunksWritten) continue;
      const source = await getVersionSource(document.id, version);
      const count = chunkCounts.get(version) ?? (source?.status === 'completed' ? source.chunk_count : null);
      await syncChunks(document.id, version, derivedChunkFields(document, version, source), visibility, count);
    }
  }

  /**
   * Sets the document's mirrored status to its latest version's, if `version` is the latest.
   * Resolves whether it wrote the document. `known` saves the first attempt its two reads: the
   * document as the caller wrote it (with the guard of that write) before it set the version's
   * status to `status`; should anything have changed the document since, the guarded write fails
   * and the next attempt reads both.
   */
  async function mirrorStatus(
    documentId: string,
    version: number,
    at: string,
    visibility: Visibility = 'now',
    known?: { readonly document: Guarded<DocumentSource>; readonly status: VersionStatus },
  ): Promise<boolean> {
    for (let attempt = 0; ; attempt += 1) {
      // The document is read before the version, so a write guarded by this read saw the newest status.
      const document = attempt === 0 && known !== undefined ? known.document : await getDocument(documentId);
      if (document === null || document.source.latest_version !== version) return false;
      const current =
        attempt === 0 && known !== undefined ? { status: known.status } : await getVersionSource(documentId, version);
      if (current === null || current.status === document.source.status) return false;
      const next: DocumentSource = {
        ...document.source,
        status: current.status,
        updated_at: at,
        rev: document.source.rev + 1,
      };
      if (await put(names.documents, documentId, next, document, visibility)) return true;
      await backoff(attempt, `status of ${documentId}`);
    }
  }

  /**
   * Advances the document's latest version to `version` (already created) unless it is there
   * already, then copies the version's status as it is now.
   */
  async function advanceLatest(documentId: string, version: VersionSource): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      const document = await getDocument(documentId);
      if (document === null || document.source.latest_version >= version.version) return;
      const next: DocumentSource = {
        ...document.source,
        latest_version: version.version,
        status: version.status,
        updated_at: version.created_at,
        rev: document.source.rev + 1,
      };
      if (await put(names.documents, documentId, next, document, 'own-reads')) {
        // The status copied above may be stale: the version may have moved on since it was read
        // (completed by a stage whose own copy skipped the document, not yet advanced to it).
        await mirrorStatus(documentId, version.version, new Date().toISOString(), 'own-reads');
        return;
      }
      await backoff(attempt, `version ${version.version} of ${documentId}`);
    }
  }

  return { syncChunks, propagate, mirrorStatus, advanceLatest };
}
