import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, signIn } from '../support/dashboard-client.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

/**
 * `GET /dashboard/api/document-names`: the names the audit page shows, one request for a page of
 * ids, deleted documents included (no 404 per document), another workspace's documents not.
 */
let svc: TestService;
let client: DashboardClient;

beforeAll(async () => {
  svc = await startTestService({ stages: 'none' });
  await svc.runtime.services.accounts.create({
    email: 'owner@example.com',
    workspaceIds: [svc.workspaceId],
    role: 'owner',
    password: 'owner passphrase for tests',
  });
  client = await signIn(svc.url, 'owner@example.com', 'owner passphrase for tests');
});
afterAll(async () => {
  await svc?.close();
});

describe('GET /dashboard/api/document-names', () => {
  it('names live and deleted documents, and knows nothing of purged or foreign ones', async () => {
    const live = (await svc.upload('live.md', 'Still here.')).body.document_id as string;
    const deleted = (await svc.upload('gone.md', 'Deleted soon.')).body.document_id as string;
    const purged = (await svc.upload('purged.md', 'Purged soon.')).body.document_id as string;
    const foreign = (await svc.upload('theirs.md', 'Another workspace.', { key: svc.keys.otherWorkspace })).body
      .document_id as string;
    expect((await svc.request('DELETE', `/api/v1/documents/${deleted}`)).status).toBe(204);
    expect((await svc.request('DELETE', `/api/v1/documents/${purged}?purge=true`)).status).toBe(204);
    const unknown = randomUUID();

    const ids = [live, deleted, purged, foreign, unknown, live];
    const res = await client.request('GET', `/dashboard/api/document-names?ids=${ids.join(',')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([
      { document_id: live, name: 'live.md', deleted: false },
      { document_id: deleted, name: 'gone.md', deleted: true },
      { document_id: purged, name: null, deleted: true },
      { document_id: foreign, name: null, deleted: true },
      { document_id: unknown, name: null, deleted: true },
    ]);
  });

  it('refuses ids that are no document ids, too many ids, and callers without a session', async () => {
    expectProblem(await client.request('GET', '/dashboard/api/document-names?ids=abc'), 400, 'bad-request');
    const many = Array.from({ length: 101 }, () => randomUUID()).join(',');
    expectProblem(await client.request('GET', `/dashboard/api/document-names?ids=${many}`), 400, 'bad-request');
    expect((await svc.request('GET', `/dashboard/api/document-names?ids=${randomUUID()}`)).status).toBe(401);
  });
});
