import { KbError } from '../errors/kb-error.ts';
import type { VersionRecord } from '../model/document-records.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';

/**
 * Whether the pipeline should still work on a version: `current`, `gone` (purged, or its document
 * deleted) or `superseded` (a newer version exists that has not failed: its own ingestion makes
 * this one's result useless, since search serves the newest completed version).
 */
export type Standing = 'current' | 'gone' | 'superseded';

export async function standingOf(
  documents: DocumentStore,
  ref: { readonly document_id: string; readonly workspace_id: string; readonly version: number },
): Promise<{ standing: Standing; version: VersionRecord | null }> {
  // Both at once: the document (with its latest version, usually the one asked for) and the version.
  const { document, version } = await documents.getDocumentAndVersion(ref.workspace_id, ref.document_id, ref.version);
  if (document?.latestVersion === ref.version && document.deletedAt === null) {
    return { standing: 'current', version: document.latest };
  }
  if (!version || !document || document.deletedAt !== null) return { standing: 'gone', version };
  if (document.latestVersion > ref.version && document.latest.status !== 'failed') {
    return { standing: 'superseded', version };
  }
  return { standing: 'current', version };
}

/**
 * Thrown by a stage at a batch boundary when its version stopped being wanted; the stage ends the
 * event there (committed, nothing published).
 */
export class IngestionCancelled extends Error {
  constructor(readonly standing: Exclude<Standing, 'current'>) {
    super(`ingestion cancelled: the version is ${standing}`);
    this.name = 'IngestionCancelled';
  }
}

/**
 * Thrown at a batch boundary when the process is shutting down: the event stays uncommitted and is
 * delivered again after a restart (the work done so far is kept: vectors are cached).
 */
export function shuttingDown(): KbError {
  return new KbError('service-unavailable', 'The worker is shutting down; the event will be delivered again.', {
    retriable: true,
  });
}
