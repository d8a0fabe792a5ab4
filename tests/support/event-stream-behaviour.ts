/**
 * `GET /api/v1/events` for either runtime: live events, filters, resume, isolation, heartbeats,
 * and a clean close.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStreamClient, openEventStream, type StreamedEvent } from './event-stream-client.ts';
import { expectProblem, type TestService } from './test-service.ts';
import type { OpenTestService } from './webhook-behaviour.ts';

export function describeEventStreamBehaviour(runtime: string, open: OpenTestService): void {
  describe(`the event stream (${runtime} runtime)`, () => {
    let svc: TestService;
    const streams: EventStreamClient[] = [];
    async function stream(key: string, options: Parameters<typeof openEventStream>[2] = {}) {
      const opened = await openEventStream(svc.url, key, options);
      streams.push(opened);
      return opened;
    }

    beforeAll(async () => {
      svc = await open({ stages: 'all', env: { KB_EVENTS_HEARTBEAT_MS: '200' } });
    });
    afterAll(async () => {
      for (const s of streams) s.close();
      await svc?.close();
    });

    describe('the event stream', () => {
      it('streams the workspace events live, with ids, types and the webhook payload', async () => {
        const live = await stream(svc.keys.read);
        expect(live.status).toBe(200);
        expect(live.contentType).toMatch(/^text\/event-stream/);
        const up = await svc.upload('aurora.md', '# Aurora\n\nThe aurora glowed green over the fjord.\n', {
          type: 'text/markdown',
        });
        const id = up.body.document_id as string;
        await live.waitFor((events) => events.some((e) => e.data.data.document_id === id));
        const event = live.events.find((e) => e.data.data.document_id === id);
        expect(event?.event).toBe('document.version.completed');
        expect(event?.id).toMatch(/^\d+-[0-9a-f-]{36}$/);
        expect(event?.data).toMatchObject({
          type: 'document.version.completed',
          data: { workspace_id: svc.workspaceId, document_id: id, version: 1, status: 'completed', name: 'aurora.md' },
        });
        // Searchable when the event arrives.
        const doc = await svc.request('GET', `/api/v1/documents/${id}`);
        expect(doc.body.status).toBe('completed');
      });

      it('filters by type and by document', async () => {
        const deletions = await stream(svc.keys.read, { query: 'types=document.deleted' });
        const a = (await svc.upload('a.md', 'Document A about basalt columns.', {})).body.document_id as string;
        const b = (await svc.upload('b.md', 'Document B about tidal pools.', {})).body.document_id as string;
        const onlyB = await stream(svc.keys.read, { query: `document_id=${b}` });
        await svc.waitForStatus(a, 'completed');
        await svc.waitForStatus(b, 'completed');
        expect((await svc.request('DELETE', `/api/v1/documents/${a}`)).status).toBe(204);
        expect((await svc.request('DELETE', `/api/v1/documents/${b}`)).status).toBe(204);
        await deletions.waitFor(
          (events) => events.filter((e) => [a, b].includes(String(e.data.data.document_id))).length === 2,
        );
        expect(deletions.events.every((e) => e.event === 'document.deleted')).toBe(true);
        await onlyB.waitFor((events) => events.some((e) => e.event === 'document.deleted'));
        expect(onlyB.events.every((e) => e.data.data.document_id === b)).toBe(true);
      });

      it('resumes after Last-Event-ID with what happened while disconnected', async () => {
        const first = await stream(svc.keys.read, { query: 'types=document.deleted,document.purged' });
        const one = (await svc.upload('one.md', 'First note about lichens.', {})).body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${one}`)).status).toBe(204);
        await first.waitFor((events) => events.some((e) => e.data.data.document_id === one));
        const last = first.events.find((e) => e.data.data.document_id === one)?.id as string;
        first.close();

        // While no one listens: two more events.
        const two = (await svc.upload('two.md', 'Second note about mosses.', {})).body.document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${two}`)).status).toBe(204);
        expect((await svc.request('DELETE', `/api/v1/documents/${two}?purge=true`)).status).toBe(204);

        const resumed = await stream(svc.keys.read, {
          lastEventId: last,
          query: 'types=document.deleted,document.purged',
        });
        await resumed.waitFor((events) => events.filter((e) => e.data.data.document_id === two).length === 2);
        expect(resumed.events.map((e) => e.id)).not.toContain(last);
        expect(resumed.events.filter((e) => e.data.data.document_id === two).map((e) => e.event)).toEqual([
          'document.deleted',
          'document.purged',
        ]);
      });

      it("never shows another workspace's events", async () => {
        const theirs = await stream(svc.keys.otherWorkspace);
        const mine = await stream(svc.keys.read);
        const id = (await svc.upload('secret.md', 'A note only workspace A may know of.', {})).body
          .document_id as string;
        expect((await svc.request('DELETE', `/api/v1/documents/${id}`)).status).toBe(204);
        await mine.waitFor((events) =>
          events.some((e) => e.event === 'document.deleted' && e.data.data.document_id === id),
        );
        await new Promise((r) => setTimeout(r, 300));
        expect(theirs.events).toEqual([]);
      });

      it('brings each event to every stream of the workspace, through each stream its own filters', async () => {
        const all = await Promise.all([1, 2, 3].map(() => stream(svc.keys.read)));
        const deletions = await Promise.all(
          [1, 2, 3].map(() => stream(svc.keys.all, { query: 'types=document.deleted' })),
        );
        const theirs = await Promise.all([1, 2].map(() => stream(svc.keys.otherWorkspace)));
        const x = (await svc.upload('x.md', 'Document X about fjord ferries.', {})).body.document_id as string;
        const y = (await svc.upload('y.md', 'Document Y about moraine lakes.', {})).body.document_id as string;
        const onlyX = await Promise.all([1, 2].map(() => stream(svc.keys.all, { query: `document_id=${x}` })));
        await svc.waitForStatus(x, 'completed');
        await svc.waitForStatus(y, 'completed');
        expect((await svc.request('DELETE', `/api/v1/documents/${x}`)).status).toBe(204);
        expect((await svc.request('DELETE', `/api/v1/documents/${y}`)).status).toBe(204);

        const about = (events: readonly StreamedEvent[]) =>
          events.filter((e) => [x, y].includes(String(e.data.data.document_id)));
        const seen = (s: EventStreamClient) => about(s.events).map((e) => `${e.event} ${e.data.data.document_id}`);
        for (const s of all) {
          await s.waitFor((events) => about(events).filter((e) => e.event === 'document.deleted').length === 2);
          expect(seen(s).sort()).toEqual(
            [
              `document.version.completed ${x}`,
              `document.version.completed ${y}`,
              `document.deleted ${x}`,
              `document.deleted ${y}`,
            ].sort(),
          );
        }
        for (const s of deletions) {
          await s.waitFor((events) => about(events).length === 2);
          expect(seen(s).sort()).toEqual([`document.deleted ${x}`, `document.deleted ${y}`].sort());
        }
        for (const s of onlyX) {
          await s.waitFor((events) => events.some((e) => e.event === 'document.deleted'));
          expect(s.events.every((e) => e.data.data.document_id === x)).toBe(true);
        }
        for (const s of theirs) expect(s.events).toEqual([]);
      });

      it('holds at most KB_MAX_STREAMS_PER_KEY streams of one key: one more is a 429 until one closes', async () => {
        const { key } = await svc.createKey({ permissions: ['read'] });
        const held = await Promise.all(Array.from({ length: 20 }, () => stream(key)));
        expect(held.map((s) => s.status)).toEqual(Array(20).fill(200));
        const refused = await svc.request('GET', '/api/v1/events', { key });
        const problem = expectProblem(refused, 429, 'rate-limit-exceeded');
        expect(problem.error?.code).toBe('too_many_streams');
        expect(problem.detail).toContain('KB_MAX_STREAMS_PER_KEY');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        // Another key of the workspace is not held back.
        expect((await stream(svc.keys.read)).status).toBe(200);

        // Closing one frees its place (once the service has seen the connection go).
        held[0]?.close();
        let again: EventStreamClient | undefined;
        for (let attempt = 0; attempt < 100 && again?.status !== 200; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, 100));
          again = await stream(key);
        }
        expect(again?.status).toBe(200);
        expectProblem(await svc.request('GET', '/api/v1/events', { key }), 429, 'rate-limit-exceeded');
      });

      it('sends heartbeats on an idle stream', async () => {
        const idle = await stream(svc.keys.read, { query: 'types=document.purged' });
        await new Promise((r) => setTimeout(r, 700));
        expect(idle.comments.filter((c) => c.includes('heartbeat')).length).toBeGreaterThanOrEqual(2);
      });

      it('answers bad requests and missing permission with problems, not a stream', async () => {
        expectProblem(await svc.request('GET', '/api/v1/events?types=document.exploded'), 400, 'bad-request');
        expectProblem(
          await svc.request('GET', '/api/v1/events', { headers: { 'Last-Event-ID': 'yesterday' } }),
          400,
          'bad-request',
        );
        expectProblem(await svc.request('GET', '/api/v1/events', { key: svc.keys.search }), 403, 'forbidden');
        expectProblem(await svc.request('GET', '/api/v1/events', { key: null }), 401, 'unauthorized');
      });
    });

    describe('closing the service', () => {
      it('ends open streams cleanly instead of hanging the shutdown', async () => {
        const own = await open({ stages: 'none' });
        const stream = await openEventStream(own.url, own.keys.read);
        expect(stream.status).toBe(200);
        // Both settle (a hanging close or stream would time the test out).
        await own.close();
        await stream.ended;
      });
    });
  });
}
