/**
 * Finished sync runs reach clients like document events: `source.sync.completed` with the run's
 * counts, `source.sync.failed` with its error, on the event stream of the source's workspace only,
 * and to webhooks. They name the source as their actor and no document.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStreamClient, openEventStream } from '../support/event-stream-client.ts';
import { page, syncAndWait, writeFiles } from '../support/source-client.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let svc: TestService;
let base: string;
let receiver: WebhookReceiver;
let streams: EventStreamClient[] = [];

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'kb-source-events-'));
  receiver = await startWebhookReceiver();
  svc = await startTestService({
    dispatchWebhooks: true,
    env: { KB_SOURCE_FOLDER_ROOTS: base, KB_OUTBOUND_ALLOW_PRIVATE: 'true' },
  });
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await svc?.close();
  await receiver?.close();
  await rm(base, { recursive: true, force: true });
});

describe('sync run events', { timeout: 120_000 }, () => {
  it('tells the source workspace of each finished run, completed with its counts or failed with why', async () => {
    const folder = path.join(base, 'atlas');
    await mkdir(folder);
    await writeFiles(folder, { 'north.md': page('north'), 'south.md': page('south') }, -60);
    const query = 'types=source.sync.completed,source.sync.failed';
    const mine = await openEventStream(svc.url, svc.keys.all, { query });
    const theirs = await openEventStream(svc.url, svc.keys.otherWorkspace, { query });
    streams = [mine, theirs];
    expect(mine.status).toBe(200);

    const hook = await svc.request('POST', '/api/v1/webhooks', {
      json: { url: `${receiver.url}/sync`, events: ['source.sync.completed'] },
    });
    expect(hook.status, hook.text).toBe(201);

    const created = await svc.request('POST', '/api/v1/sources', {
      json: { name: 'atlas', kind: 'folder', path: folder },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    // A stream of one document's events: a source's id is no document's.
    const oneDocument = await openEventStream(svc.url, svc.keys.all, { query: `${query}&document_id=${id}` });
    streams.push(oneDocument);
    const run = await syncAndWait(svc, id);
    expect(run.status).toBe('completed');
    await mine.waitFor((events) => events.length >= 1);
    expect(mine.events[0]?.data).toMatchObject({
      type: 'source.sync.completed',
      data: {
        source_id: id,
        source: 'atlas',
        kind: 'folder',
        run_id: run.run_id,
        status: 'completed',
        counts: { seen: 2, created: 2, updated: 0, deleted: 0, failed: 0 },
        actor: { type: 'source', id, name: 'atlas' },
      },
    });
    expect(mine.events[0]?.data.data).not.toHaveProperty('document_id');

    // The webhook carries the same payload; its delivery names the source, not a document.
    await receiver.waitFor(() => receiver.to('/sync').length >= 1);
    expect(receiver.to('/sync')[0]?.json.data).toMatchObject({ source_id: id, actor: { type: 'source', id } });
    const listed = await svc.request('GET', `/api/v1/webhooks/${hook.body.id}/deliveries`);
    expect(listed.body.deliveries[0]).toMatchObject({
      event_type: 'source.sync.completed',
      document_id: null,
      source_id: id,
    });

    // The folder disappears: the next run cannot reach the source and fails.
    await rm(folder, { recursive: true });
    const failed = await syncAndWait(svc, id);
    expect(failed.status).toBe('failed');
    await mine.waitFor((events) => events.length >= 2);
    expect(mine.events[1]?.data).toMatchObject({
      type: 'source.sync.failed',
      data: { source_id: id, run_id: failed.run_id, status: 'failed', error: { code: failed.errors[0]?.code } },
    });
    // Another workspace hears nothing of it, nor a stream of one document.
    expect(theirs.events).toEqual([]);
    expect(oneDocument.events).toEqual([]);
  });
});
