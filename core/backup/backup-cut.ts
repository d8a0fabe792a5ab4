import type { VersionRecord } from '../model/document-records.model.ts';
import type { StoredDocument } from '../ports/document-store/document-store.port.ts';

export interface DocumentWithVersions {
  readonly document: StoredDocument;
  readonly versions: readonly VersionRecord[];
}

const after = (value: string | null, at: string) => value !== null && value > at;

/** A version whose ingestion is not finished in the backup: restored `pending`, so it is ingested again. */
function unfinished(version: VersionRecord): VersionRecord {
  return {
    ...version,
    status: 'pending',
    completedAt: null,
    servedFrom: null,
    servedUntil: null,
    chunkCount: 0,
    tokens: 0,
    embeddingModel: null,
    error: null,
    progress: null,
  };
}

/**
 * A document and its versions as they stood at `at`, or null when the document did not exist yet.
 *
 * With `exact` false (a store read without one transaction) whatever happened after `at` is undone:
 * versions created after it are left out, a completion, failure or serving after it is undone (the
 * version is `pending`), a deletion after it too. Either way a version whose ingestion had not
 * finished (`pending` or `processing`) is kept as `pending` without progress, so that a restored
 * service ingests it from its file. Archiving after `at` cannot be undone (its chunks are gone).
 */
export function cutDocument(entry: DocumentWithVersions, at: string, exact: boolean): DocumentWithVersions | null {
  const { document } = entry;
  if (!exact && after(document.createdAt, at)) return null;
  const versions = entry.versions
    .filter((v) => exact || !after(v.createdAt, at))
    .map((v): VersionRecord => {
      if (v.status === 'pending' || v.status === 'processing') return unfinished(v);
      if (exact) return v;
      if (after(v.completedAt, at) || (v.status === 'failed' && after(v.error?.at ?? null, at))) return unfinished(v);
      if (after(v.servedFrom, at)) return { ...v, servedFrom: null, servedUntil: null };
      if (after(v.servedUntil, at)) return { ...v, servedUntil: null };
      return v;
    });
  if (versions.length === 0) return null;
  if (exact) return { document, versions };
  const deletedAt = after(document.deletedAt, at) ? null : document.deletedAt;
  const latestVersion = Math.max(...versions.map((v) => v.version));
  const served = deletedAt === null ? versions.find((v) => v.servedFrom !== null && v.servedUntil === null) : undefined;
  let updatedAt = document.updatedAt;
  if (after(updatedAt, at)) {
    const times = [document.createdAt, deletedAt, ...versions.flatMap((v) => [v.createdAt, v.completedAt])];
    updatedAt =
      times
        .filter((t): t is string => t !== null && t <= at)
        .sort()
        .at(-1) ?? document.createdAt;
  }
  return {
    document: { ...document, deletedAt, latestVersion, servedVersion: served?.version ?? null, updatedAt },
    versions,
  };
}
