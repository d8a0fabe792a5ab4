/**
 * A document deleted while many of its versions are still being ingested: every version's work ends
 * (none stays `pending` or `processing` in the store for ever) and a purge removes them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VersionRecord } from '../../core/model/document-records.model.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { putContent, waitForVersion } from '../support/version-client.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

const text = (n: number) =>
  `Revision ${n} of the harbour survey.\n\n${Array.from({ length: 40 }, (_, i) => `Line ${i} of revision ${n}: the tide gauge read ${n * 7 + i} centimetres at dawn.`).join('\n')}`;

async function versionsOf(id: string, latest: number): Promise<(VersionRecord | null)[]> {
  const store = svc.runtime.ports.documents;
  return Promise.all(Array.from({ length: latest }, (_, i) => store.getVersion(id, i + 1)));
}

describe('versions of a document deleted while they are ingested', { timeout: 180_000 }, () => {
  it('all end, none left pending or processing, and a purge removes them', async () => {
    const up = await svc.upload('survey.txt', text(1));
    expect(up.status).toBe(201);
    const id = up.body.document_id as string;
    await waitForVersion(svc, id, 1);

    // 20 updates and 5 rollbacks sent back to back, with the delete in the middle of them.
    let accepted = 1;
    for (let i = 0; i < 25; i += 1) {
      if (i === 13) expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
      const res =
        i % 5 === 4
          ? await svc.request('POST', `/api/v1/documents/${id}/rollback`, { json: { target_version: 1 } })
          : await putContent(svc, id, 'survey.txt', text(i + 2));
      if (i < 13) {
        expect([200, 201]).toContain(res.status);
        accepted = res.body.version;
      } else expect(res.status).toBe(404);
    }
    expect(accepted).toBe(14);

    let versions: (VersionRecord | null)[] = [];
    const deadline = Date.now() + 120_000;
    do {
      await new Promise((resolve) => setTimeout(resolve, 250));
      versions = await versionsOf(id, accepted);
    } while (Date.now() < deadline && versions.some((v) => v?.status === 'pending' || v?.status === 'processing'));
    const stranded = versions.filter((v) => v?.status === 'pending' || v?.status === 'processing');
    expect(stranded.map((v) => v?.version)).toEqual([]);
    // The versions that never completed say why their work ended.
    for (const v of versions) {
      expect(v).not.toBeNull();
      if (v?.status === 'failed') expect(['superseded', 'document-deleted']).toContain(v.error?.code);
    }
    expect(versions.some((v) => v?.error?.code === 'document-deleted')).toBe(true);

    const purge = await svc.request('DELETE', `/api/v1/documents/${id}?purge=true`);
    expect(purge.status, purge.text).toBe(204);
    expect((await versionsOf(id, accepted)).filter((v) => v !== null)).toEqual([]);
  });
});
