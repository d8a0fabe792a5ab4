import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentView } from '../../core/model/response-views.model.ts';
import { isoNow } from '../../core/util/time.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * Writes a killed process left half done are finished. Between recording a version and publishing
 * the event that starts its ingestion, it leaves the version `pending` with no event: a process
 * running the parse stage finds such versions once the parse stage has nothing left to handle, and
 * queues them again. Between deleting a document and writing its audit entry, it leaves a deletion
 * without its entry: the next delete of the document finishes it, with one entry however often.
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { KB_STRANDED_CHECK_MS: '200', KB_STRANDED_AFTER_MS: '1000' } });
});

afterAll(async () => {
  await svc?.close();
});

async function waitForVersion(id: string, version: number, status: string, timeoutMs = 30_000): Promise<DocumentView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await svc.request<DocumentView>('GET', `/api/v1/documents/${id}`);
    if (res.body.version === version && res.body.status === status) return res.body;
    if (Date.now() > deadline)
      throw new Error(`${id} is at v${res.body.version} ${res.body.status}, not v${version} ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('versions left pending without their event', () => {
  it('are ingested: a new version recorded without its event completes, and a reset one completes again', async () => {
    const upload = await svc.upload(
      'harbour.md',
      '# Harbour\n\nThe pilot boat logged the cormorant colony at dawn.\n',
      {
        type: 'text/markdown',
      },
    );
    const id: string = upload.body.document_id;
    await svc.waitForStatus(id, 'completed');
    const { documents } = svc.runtime.ports;

    // What a process killed right after `appendVersion` leaves: version 2 recorded, no event.
    const created = await documents.appendVersion(svc.workspaceId, id, (latest) => ({
      name: latest.name,
      mimeType: latest.mimeType,
      sizeBytes: latest.sizeBytes,
      contentHash: latest.contentHash,
      storageKey: latest.storageKey,
      metadata: { reviewed: true },
      changeReason: 'recorded without its event',
      restoredFrom: null,
      createdBy: latest.createdBy,
      createdAt: isoNow(),
    }));
    expect(created).toMatchObject({ version: 2, status: 'pending' });
    const second = await waitForVersion(id, 2, 'completed');
    expect(second.metadata).toEqual({ reviewed: true });
    expect(second.served_version).toBe(2);

    // What a reprocess killed between resetting the version and publishing leaves.
    await documents.updateVersion(id, 2, { status: 'pending', error: null });
    await waitForVersion(id, 2, 'completed');
    const search = await svc.request('POST', '/api/v1/search', {
      json: { query: 'cormorant colony', mode: 'keyword' },
    });
    expect(
      search.body.results.map((r: { document_id: string; version: number }) => [r.document_id, r.version]),
    ).toEqual([[id, 2]]);
  });

  it('a deletion recorded without its audit entry gets one entry from the next delete, however often it comes', async () => {
    const upload = await svc.upload('tide.md', '# Tide\n\nThe ferry timetable follows the spring tides.\n', {
      type: 'text/markdown',
    });
    const id: string = upload.body.document_id;
    await svc.waitForStatus(id, 'completed');
    // What a process killed right after the store's deletion leaves: no audit entry.
    const deletedAt = isoNow();
    await svc.runtime.ports.documents.softDelete(svc.workspaceId, id, deletedAt);
    const audit = async () =>
      (await svc.request('GET', `/api/v1/audit-logs?document_id=${id}`)).body.entries.map(
        (e: { action: string; timestamp: string }) => [e.action, e.timestamp],
      );
    expect(await audit()).toEqual([['create', expect.any(String)]]);
    for (let i = 0; i < 2; i++) {
      const again = await svc.request('DELETE', `/api/v1/documents/${id}`);
      expect(again.status).toBe(404);
    }
    // One entry, at the deletion's own instant.
    expect(await audit()).toEqual([
      ['create', expect.any(String)],
      ['delete', deletedAt],
    ]);
    const search = await svc.request('POST', '/api/v1/search', { json: { query: 'ferry timetable', mode: 'keyword' } });
    expect(search.body.results).toEqual([]);
  });
});
