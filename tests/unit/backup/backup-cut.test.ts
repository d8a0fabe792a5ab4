import { describe, expect, it } from 'vitest';
import { cutDocument } from '../../../core/backup/backup-cut.ts';
import type { VersionRecord } from '../../../core/model/document-records.model.ts';
import type { StoredDocument } from '../../../core/ports/document-store/document-store.port.ts';

/** A backup of a store read without one transaction shows each document as it stood at the cut-off. */

const T = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`;

function version(n: number, fields: Partial<VersionRecord>): VersionRecord {
  return {
    documentId: 'd',
    workspaceId: 'w',
    version: n,
    status: 'completed',
    name: 'a.md',
    mimeType: 'text/markdown',
    sizeBytes: 1,
    contentHash: 'h',
    storageKey: `k${n}`,
    metadata: {},
    changeReason: null,
    restoredFrom: null,
    createdBy: 'key',
    createdAt: T(n * 10),
    completedAt: T(n * 10 + 1),
    servedFrom: T(n * 10 + 1),
    servedUntil: null,
    chunkCount: 3,
    tokens: 30,
    embeddingModel: 'm',
    error: null,
    progress: null,
    archivedAt: null,
    ...fields,
  };
}

const document: StoredDocument = {
  id: 'd',
  workspaceId: 'w',
  source: 'api',
  createdAt: T(10),
  updatedAt: T(45),
  deletedAt: T(45),
  latestVersion: 3,
  servedVersion: null,
};
const versions = [
  version(1, { servedUntil: T(21) }),
  version(2, { servedUntil: T(45) }),
  version(3, {
    status: 'failed',
    completedAt: null,
    servedFrom: null,
    error: { code: 'no-text', message: '', stage: 'parse', attempts: 1, at: T(35) },
  }),
];

describe('cutting a document at an instant', () => {
  it('leaves out a document created after the cut', () => {
    expect(cutDocument({ document, versions }, T(5), false)).toBeNull();
  });

  it('undoes what happened after the cut: later versions, a completion, the serving and the deletion', () => {
    const cut = cutDocument({ document, versions }, T(20), false)!;
    expect(cut.versions.map((v) => v.version)).toEqual([1, 2]);
    // Version 2 was created before the cut and completed after it: pending again, to be ingested.
    expect(cut.versions[1]).toMatchObject({ status: 'pending', completedAt: null, servedFrom: null, chunkCount: 0 });
    // Version 1 was still served at the cut, and the document not deleted.
    expect(cut.versions[0]).toMatchObject({ status: 'completed', servedFrom: T(11), servedUntil: null });
    expect(cut.document).toMatchObject({ latestVersion: 2, servedVersion: 1, deletedAt: null, updatedAt: T(20) });
  });

  it('keeps what happened before the cut, and a failure after it becomes pending', () => {
    const cut = cutDocument({ document, versions }, T(40), false)!;
    expect(cut.versions.map((v) => v.status)).toEqual(['completed', 'completed', 'failed']);
    expect(cut.versions[1]).toMatchObject({ servedUntil: null });
    expect(cut.document).toMatchObject({ servedVersion: 2, deletedAt: null, latestVersion: 3 });
    const early = cutDocument({ document, versions }, T(32), false)!;
    expect(early.versions[2]).toMatchObject({ status: 'pending', error: null });
  });

  it('changes nothing of an exact snapshot but unfinished versions, which are restored pending', () => {
    const processing = version(4, {
      status: 'processing',
      progress: { stage: 'embed', chunksDone: 1, chunksTotal: 3 },
    });
    const cut = cutDocument({ document, versions: [...versions, processing] }, T(0), true)!;
    expect(cut.document).toBe(document);
    expect(cut.versions.slice(0, 3)).toEqual(versions);
    expect(cut.versions[3]).toMatchObject({ status: 'pending', progress: null });
  });
});
