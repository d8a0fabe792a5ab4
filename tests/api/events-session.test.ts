/**
 * The event stream opened by a signed-in dashboard session: a browser's `EventSource` sends the
 * session cookie but no headers, so the workspace is named in `?workspace=`, checked against the
 * account's workspaces exactly as `X-KB-Workspace` is. API keys gain nothing from the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, signIn } from '../support/dashboard-client.ts';
import { type EventStreamClient, openEventStream } from '../support/event-stream-client.ts';
import { expectProblem, startTestService, type TestService } from '../support/test-service.ts';

let svc: TestService;
/** An account of workspace A only. */
let onlyA: DashboardClient;
/** An account of workspaces A and B (A first). */
let both: DashboardClient;
let passwordOfA = '';
const streams: EventStreamClient[] = [];

beforeAll(async () => {
  svc = await startTestService({ stages: 'none', env: { KB_EVENTS_HEARTBEAT_MS: '200' } });
  const accounts = svc.runtime.services.accounts;
  // Passwords of their own: a generated one would have to be changed before the first stream.
  const a = await accounts.create({
    email: 'a@example.com',
    workspaceIds: [svc.workspaceId],
    role: 'member',
    password: 'a-chosen-password-1',
  });
  const ab = await accounts.create({
    email: 'ab@example.com',
    workspaceIds: [svc.workspaceId, svc.otherWorkspaceId],
    role: 'member',
    password: 'ab-chosen-password-1',
  });
  passwordOfA = a.password;
  onlyA = await signIn(svc.url, 'a@example.com', a.password);
  both = await signIn(svc.url, 'ab@example.com', ab.password);
});
afterAll(async () => {
  for (const s of streams) s.close();
  await svc?.close();
});

/** A stream opened as a browser's EventSource would: the cookie, no key, no other header. */
async function sessionStream(client: DashboardClient, query: string): Promise<EventStreamClient> {
  const opened = await openEventStream(svc.url, null, { query, headers: { cookie: client.cookie } });
  streams.push(opened);
  return opened;
}

/** Uploads a document with `key` and deletes it: a `document.deleted` event of the key's workspace. */
async function deletedDocument(key: string, name: string): Promise<string> {
  const up = await svc.upload(name, `A note called ${name}.`, { key });
  expect(up.status, up.text).toBe(201);
  const id = up.body.document_id as string;
  const deleted = await svc.request('DELETE', `/api/v1/documents/${id}`, { key });
  expect(deleted.status, deleted.text).toBe(204);
  return id;
}

const deletionOf = (id: string) => (events: EventStreamClient['events']) =>
  events.some((e) => e.event === 'document.deleted' && e.data.data.document_id === id);

describe('the event stream of a dashboard session', () => {
  it('opens with the session cookie alone for a workspace of the account, and streams its events', async () => {
    const stream = await sessionStream(onlyA, `workspace=${svc.workspaceId}`);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const id = await deletedDocument(svc.keys.all, 'mine.md');
    await stream.waitFor(deletionOf(id));
    expect(stream.events.find((e) => e.data.data.document_id === id)?.data.data.workspace_id).toBe(svc.workspaceId);
  });

  it("refuses another workspace's stream with 404, as the header is refused, and sends no stream", async () => {
    for (const workspace of [svc.otherWorkspaceId, 'no-such-workspace']) {
      const refused = await onlyA.request('GET', `/api/v1/events?workspace=${workspace}`);
      const problem = expectProblem(refused, 404, 'not-found');
      expect(problem.detail).toContain(workspace);
      expect(refused.headers.get('content-type')).not.toMatch(/event-stream/);
    }
    const header = await onlyA.request('GET', '/api/v1/events', {
      headers: { 'x-kb-workspace': svc.otherWorkspaceId },
    });
    expectProblem(header, 404, 'not-found');
  });

  it("never lets an event of workspace A reach the stream of workspace B, nor B's reach A's", async () => {
    const streamA = await sessionStream(both, `workspace=${svc.workspaceId}`);
    const streamB = await sessionStream(both, `workspace=${svc.otherWorkspaceId}`);
    expect([streamA.status, streamB.status]).toEqual([200, 200]);
    const inA = await deletedDocument(svc.keys.all, 'only-in-a.md');
    const inB = await deletedDocument(svc.keys.otherWorkspace, 'only-in-b.md');
    await streamA.waitFor(deletionOf(inA));
    await streamB.waitFor(deletionOf(inB));
    // Time for a stray event to arrive, were there one.
    await new Promise((r) => setTimeout(r, 300));
    expect(streamA.events.every((e) => e.data.data.workspace_id === svc.workspaceId)).toBe(true);
    expect(streamB.events.every((e) => e.data.data.workspace_id === svc.otherWorkspaceId)).toBe(true);
    expect(streamA.events.map((e) => e.data.data.document_id)).not.toContain(inB);
    expect(streamB.events.map((e) => e.data.data.document_id)).not.toContain(inA);
  });

  it('answers a header and a parameter naming different workspaces with 400', async () => {
    const res = await both.request('GET', `/api/v1/events?workspace=${svc.otherWorkspaceId}`, {
      headers: { 'x-kb-workspace': svc.workspaceId },
    });
    expectProblem(res, 400, 'bad-request');
  });

  it('honours the parameter on the event stream only: other routes act on the header or the first workspace', async () => {
    const inB = await svc.upload('listed-in-b.md', 'A note of workspace B.', { key: svc.keys.otherWorkspace });
    expect(inB.status).toBe(201);
    const list = await both.request('GET', `/api/v1/documents?workspace=${svc.otherWorkspaceId}`);
    expect(list.status).toBe(200);
    expect(list.body.documents.map((d: { document_id: string }) => d.document_id)).not.toContain(inB.body.document_id);
  });

  it('needs a live session: none or a signed-out one is 401', async () => {
    const none = await openEventStream(svc.url, null, { query: `workspace=${svc.workspaceId}` });
    streams.push(none);
    expect(none.status).toBe(401);
    const leaving = await signIn(svc.url, 'a@example.com', passwordOfA);
    expect((await leaving.request('DELETE', '/dashboard/api/session')).status).toBe(204);
    expectProblem(await leaving.request('GET', `/api/v1/events?workspace=${svc.workspaceId}`), 401, 'unauthorized');
  });
});

describe('the workspace parameter with an API key', () => {
  it("cannot widen a key to another workspace's stream (400), and its own workspace is allowed", async () => {
    const refused = await svc.request('GET', `/api/v1/events?workspace=${svc.otherWorkspaceId}`, {
      key: svc.keys.read,
    });
    expectProblem(refused, 400, 'bad-request');
    const own = await openEventStream(svc.url, svc.keys.read, { query: `workspace=${svc.workspaceId}` });
    streams.push(own);
    expect(own.status).toBe(200);
    const id = await deletedDocument(svc.keys.all, 'for-the-key.md');
    await own.waitFor(deletionOf(id));
    expect(own.events.every((e) => e.data.data.workspace_id === svc.workspaceId)).toBe(true);
  });

  it('a key still wins over a session cookie sent with it', async () => {
    const stream = await openEventStream(svc.url, svc.keys.otherWorkspace, {
      query: `workspace=${svc.workspaceId}`,
      headers: { cookie: both.cookie },
    });
    streams.push(stream);
    expect(stream.status).toBe(400);
  });
});
