/**
 * The event stream service over a real message log (SQLite in the unit tests, Kafka in the
 * integration tests), with the log's tails counted as they open and stop: how many readers of the
 * log the streams cost, what each stream receives (its workspace only, through its own filters),
 * resuming without a gap, and the cap on one caller's streams.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { isKbError } from '../../core/errors/kb-error.ts';
import { eventSchema } from '../../core/events/events.ts';
import { documentNotification, type NotificationType, publishNotification } from '../../core/events/notifications.ts';
import type {
  MessageLog,
  MessageLogAdmin,
  MessageLogTail,
  Subscription,
} from '../../core/ports/message-log/message-log.port.ts';
import {
  createEventStreamService,
  type EventStreamRequest,
  type EventStreamService,
  type StreamEvent,
} from '../../core/services/event-stream.service.ts';

export interface EventStreamLogFixture {
  readonly log: MessageLog & MessageLogAdmin & MessageLogTail;
  cleanup(): Promise<void>;
}

const WAIT = { timeout: 30_000, interval: 20 };

interface Client {
  readonly events: StreamEvent[];
  readonly ended: unknown[];
  readonly subscription: Subscription;
}

export function describeEventStreamService(name: string, make: () => Promise<EventStreamLogFixture>): void {
  describe(`the event stream service (${name} log)`, () => {
    let fixture: EventStreamLogFixture;
    let log: EventStreamLogFixture['log'];
    const topics: string[] = [];
    let topic: string;
    let tails: { opened: number; running: number };
    let service: EventStreamService;
    const opened: Subscription[] = [];

    /** The log's tail, counting the tails opened and those still running. */
    function countedTail(inner: MessageLogTail): MessageLogTail {
      return {
        async tail(options) {
          let running = true;
          const done = () => {
            if (!running) return;
            running = false;
            tails.running--;
          };
          const sub = await inner.tail({
            ...options,
            onEnd: (error) => {
              done();
              options.onEnd?.(error);
            },
          });
          tails.opened++;
          tails.running++;
          return {
            async stop() {
              done();
              await sub.stop();
            },
          };
        },
      };
    }

    beforeAll(async () => {
      fixture = await make();
      log = fixture.log;
    }, 60_000);
    afterAll(async () => {
      await log?.deleteTopics(topics).catch(() => undefined);
      await log?.close();
      await fixture?.cleanup();
    }, 60_000);

    beforeEach(async () => {
      topic = `kb-notification-${randomUUID()}`;
      topics.push(topic);
      await log.ensureTopics([{ name: topic, partitions: 3, schema: eventSchema('notification') }]);
      tails = { opened: 0, running: 0 };
      service = createEventStreamService({
        logTail: countedTail(log),
        topic,
        heartbeatMs: 15_000,
        maxStreamsPerKey: 5,
        lingerMs: 100,
      });
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.stop();
      await service.close();
    });

    async function stream(
      workspaceId: string,
      options: Partial<Pick<EventStreamRequest, 'types' | 'documentId' | 'lastEventId'>> & {
        keyId?: string;
        send?: (event: StreamEvent) => Promise<void>;
        /** A client that takes this long to take each event (so the log moves on meanwhile). */
        slowMs?: number;
      } = {},
    ): Promise<Client> {
      const events: StreamEvent[] = [];
      const ended: unknown[] = [];
      const { keyId, send, slowMs, ...filters } = options;
      const subscription = await service.open(
        { workspaceId, keyId: keyId ?? randomUUID(), traceId: randomUUID() },
        {
          ...filters,
          send:
            send ??
            (async (event) => {
              if (slowMs !== undefined) await new Promise((r) => setTimeout(r, slowMs));
              events.push(event);
            }),
          onEnd: (error) => ended.push(error),
        },
      );
      opened.push(subscription);
      return { events, ended, subscription };
    }

    async function publish(workspaceId: string, type: NotificationType, documentId: string = randomUUID()) {
      const notification = documentNotification(type, { id: documentId, workspaceId, source: 'upload' }, null);
      await publishNotification(log, topic, notification);
      return notification;
    }

    const subjects = (client: Client) => client.events.map((e) => e.payload.data.document_id);

    it('serves any number of streams from one tail of the log, each with its own filters and only its workspace', async () => {
      const docA = randomUUID();
      const all = await Promise.all(Array.from({ length: 10 }, () => stream('ws-a')));
      const deletions = await Promise.all(
        Array.from({ length: 10 }, () => stream('ws-a', { types: ['document.deleted'] })),
      );
      const oneDocument = await Promise.all(Array.from({ length: 10 }, () => stream('ws-a', { documentId: docA })));
      const other = await Promise.all(Array.from({ length: 10 }, () => stream('ws-b')));
      // Forty streams, one reader of the log.
      expect(tails).toEqual({ opened: 1, running: 1 });

      const completed = await publish('ws-a', 'document.version.completed', docA);
      const deleted = await publish('ws-a', 'document.deleted');
      const theirs = await publish('ws-b', 'document.deleted');
      await vi.waitFor(() => {
        for (const c of [...all, ...deletions, ...oneDocument, ...other]) expect(c.events.length).toBeGreaterThan(0);
        for (const c of all) expect(c.events).toHaveLength(2);
      }, WAIT);
      // Give anything that should not come the time to come.
      await publish('ws-a', 'document.purged', randomUUID());
      await vi.waitFor(() => expect(all.every((c) => c.events.length === 3)).toBe(true), WAIT);

      for (const c of all)
        expect(c.events.slice(0, 2).map((e) => e.payload.type)).toEqual([completed.payload.type, deleted.payload.type]);
      for (const c of deletions) expect(subjects(c)).toEqual([deleted.subject]);
      for (const c of oneDocument) expect(subjects(c)).toEqual([docA]);
      for (const c of other) expect(subjects(c)).toEqual([theirs.subject]);
      for (const c of [...all, ...deletions, ...oneDocument]) expect(subjects(c)).not.toContain(theirs.subject);
      expect(tails.opened).toBe(1);

      // The last stream gone, the shared tail stops after its linger; the next stream starts another.
      for (const s of opened.splice(0)) await s.stop();
      await vi.waitFor(() => expect(tails.running).toBe(0), WAIT);
      await stream('ws-a');
      expect(tails).toEqual({ opened: 2, running: 1 });
    });

    it('resumes after an event from a tail of its own, then goes on with the shared one', async () => {
      const live = await stream('ws-a');
      const first = await publish('ws-a', 'document.deleted');
      await vi.waitFor(() => expect(live.events).toHaveLength(1), WAIT);
      const resumeFrom = live.events[0]?.id as string;
      const missed = [await publish('ws-a', 'document.deleted'), await publish('ws-a', 'document.purged')];
      await publish('ws-b', 'document.deleted');

      const resumed = await stream('ws-a', { lastEventId: resumeFrom });
      await vi.waitFor(() => expect(resumed.events).toHaveLength(2), WAIT);
      // Partitions interleave in no stated order.
      expect(subjects(resumed).sort()).toEqual(missed.map((n) => n.subject).sort());
      expect(subjects(resumed)).not.toContain(first.subject);
      // Its own tail stopped once it had read the past: one reader again.
      await vi.waitFor(() => expect(tails.running).toBe(1), WAIT);
      expect(tails.opened).toBe(2);

      const after = await publish('ws-a', 'document.deleted');
      await vi.waitFor(() => expect(subjects(resumed)).toContain(after.subject), WAIT);
      await new Promise((r) => setTimeout(r, 200));
      expect(subjects(resumed)).toHaveLength(3);
      expect(subjects(resumed)[2]).toBe(after.subject);
    });

    it('loses nothing while a resuming stream switches from its own tail to the shared one', async () => {
      const first = await stream('ws-a');
      const resumePoint = await publish('ws-a', 'document.deleted');
      await vi.waitFor(() => expect(first.events).toHaveLength(1), WAIT);
      const lastEventId = first.events[0]?.id as string;
      // Events keep coming before, during and after the resume.
      const published: string[] = [];
      let publishing = true;
      const publisher = (async () => {
        while (publishing) {
          published.push((await publish('ws-a', 'document.deleted')).subject);
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      await vi.waitFor(() => expect(published.length).toBeGreaterThan(50), WAIT);
      // A client slower than the publisher: the log grows while the stream reads its past.
      const resumed = await stream('ws-a', { lastEventId, slowMs: 3 });
      await vi.waitFor(() => expect(published.length).toBeGreaterThan(150), WAIT);
      publishing = false;
      await publisher;
      await vi.waitFor(() => expect(new Set(subjects(resumed)).size).toBe(published.length), WAIT);
      expect(new Set(subjects(resumed))).toEqual(new Set(published));
      expect(subjects(resumed)).not.toContain(resumePoint.subject);
      await vi.waitFor(() => expect(tails.running).toBe(1), WAIT);
    });

    it('holds at most maxStreamsPerKey streams per caller, and frees a place when a stream closes or ends', async () => {
      const key = randomUUID();
      const five = await Promise.all(Array.from({ length: 5 }, () => stream('ws-a', { keyId: key })));
      const refused = await stream('ws-a', { keyId: key }).catch((error: unknown) => error);
      expect(isKbError(refused) && refused.code).toBe('too-many-streams');
      expect(isKbError(refused) && refused.retryAfter).toBeGreaterThan(0);
      // Another caller is not held back by this one.
      await stream('ws-a', { keyId: randomUUID() });

      await five[0]?.subscription.stop();
      await stream('ws-a', { keyId: key });
      await expect(stream('ws-a', { keyId: key })).rejects.toMatchObject({ code: 'too-many-streams' });

      // A stream whose client fails ends by itself, and its place is free again.
      await five[1]?.subscription.stop();
      const failing = await stream('ws-a', {
        keyId: key,
        send: async () => {
          throw new Error('the client went away');
        },
      });
      await publish('ws-a', 'document.deleted');
      await vi.waitFor(() => expect(failing.ended).toHaveLength(1), WAIT);
      await stream('ws-a', { keyId: key });
    });

    it('ends a stream whose client falls too far behind, without holding back the others', async () => {
      const stuck = await stream('ws-a', { send: () => new Promise<void>(() => {}) });
      const reading = await stream('ws-a');
      for (let i = 0; i < 11; i++) {
        await Promise.all(Array.from({ length: 100 }, () => publish('ws-a', 'document.deleted')));
      }
      await vi.waitFor(() => expect(reading.events).toHaveLength(1100), WAIT);
      expect(stuck.ended).toHaveLength(1);
      expect(String(stuck.ended[0])).toContain('behind');
    });
  });
}
