import type { Logger } from '../model/logger.model.ts';
import type { DocumentStore } from '../ports/document-store/document-store.port.ts';
import type { ObjectStore } from '../ports/object-store/object-store.port.ts';

export interface LeftoversDeps {
  readonly objects: ObjectStore;
  readonly documents: DocumentStore;
  /**
   * Only what is older than this is touched (the request timeout: no upload still in progress can
   * be that old, and an ingestion writes its outputs only for versions that exist).
   */
  readonly olderThanMs: number;
  readonly logger: Logger;
}

export interface SweepResult {
  /** Temporary files of writes a crash interrupted. */
  readonly temporary: number;
  /** Stored uploads no version references, and parsed texts or chunk batches of versions that do not exist. */
  readonly orphans: number;
}

export interface LeftoversService {
  sweep(): Promise<SweepResult>;
}

const DOCUMENT_OBJECT = /^workspaces\/[^/]+\/documents\/([^/]+)\/(?:uploads\/[^/]+|versions\/(\d+)\/[^/]+)$/;

/**
 * Removes what a process killed mid-upload or mid-ingestion left in the object store: temporary
 * files of interrupted writes, uploaded files whose version was never recorded, and derived
 * objects of versions that no longer exist. Soft-deleted documents keep their files (their
 * history stays readable); purged ones have none left.
 */
export function createLeftoversService(deps: LeftoversDeps): LeftoversService {
  /** Storage keys the versions of a document reference, and its version numbers. */
  async function referencesOf(documentId: string): Promise<{ keys: Set<string>; versions: Set<number> }> {
    const keys = new Set<string>();
    const versions = new Set<number>();
    for (let version = 1; ; version++) {
      const record = await deps.documents.getVersion(documentId, version);
      if (!record) break;
      keys.add(record.storageKey);
      versions.add(version);
    }
    return { keys, versions };
  }

  return {
    async sweep() {
      const temporary = await deps.objects.sweepTemporary(deps.olderThanMs);
      const cutoff = Date.now() - deps.olderThanMs;
      const known = new Map<string, { keys: Set<string>; versions: Set<number> }>();
      const doomed: string[] = [];
      for await (const key of deps.objects.list('workspaces/')) {
        const match = DOCUMENT_OBJECT.exec(key);
        if (!match) continue;
        const documentId = match[1] as string;
        let refs = known.get(documentId);
        if (!refs) {
          refs = await referencesOf(documentId);
          known.set(documentId, refs);
        }
        const referenced = match[2] === undefined ? refs.keys.has(key) : refs.versions.has(Number(match[2]));
        if (referenced) continue;
        const info = await deps.objects.stat(key);
        if (info && info.modifiedAt < cutoff) doomed.push(key);
      }
      let orphans = 0;
      for (const key of doomed) {
        // Looked up again right before deleting: a version recorded meanwhile keeps its file.
        const documentId = (DOCUMENT_OBJECT.exec(key) as RegExpExecArray)[1] as string;
        const refs = await referencesOf(documentId);
        const version = DOCUMENT_OBJECT.exec(key)?.[2];
        if (version === undefined ? refs.keys.has(key) : refs.versions.has(Number(version))) continue;
        await deps.objects.delete(key);
        orphans += 1;
      }
      if (temporary + orphans > 0) {
        deps.logger.info({ temporary, orphans }, 'removed files that interrupted uploads and ingestion left behind');
      }
      return { temporary, orphans };
    },
  };
}
