import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { StreamEvent } from '../../../core/services/event-stream.service.ts';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import { EventStreamResponse, EventsQuery } from '../schemas/events.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** Reconnection delay suggested to EventSource clients. */
const RETRY_MS = 3_000;

function frame(event: StreamEvent): string {
  return `id: ${event.id}\nevent: ${event.payload.type}\ndata: ${JSON.stringify(event.payload)}\n\n`;
}

/** Writes `chunk`, resolving once it is handed to the socket (so a slow reader holds back only its own stream). */
function write(raw: ServerResponse, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (raw.destroyed || raw.writableEnded) {
      reject(new Error('the stream is closed'));
      return;
    }
    raw.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

/** `GET /events`: the live event stream of the key's workspace (permission `read`). */
const eventsRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const { events } = services;
  const open = new Set<() => void>();
  // The server's close waits for open connections: end the streams first.
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    '/events',
    {
      config: { permission: 'read', scopedTokens: true, sessionWorkspaceQuery: true },
      schema: {
        tags: ['events'],
        operationId: 'streamEvents',
        summary: 'Live stream of document events (Server-Sent Events)',
        description:
          "The events of the key's workspace as they are committed: `document.version.completed`, `document.version.failed`, `document.deleted`, `document.purged`, `source.sync.completed`, `source.sync.failed`. Reconnecting with `Last-Event-ID` resumes after that event, as far back as the log retains events (7 days by default); an event may come twice around a resume. A signed-in dashboard session (cookie) may name one of its account's workspaces in `workspace`, since a browser's `EventSource` cannot send `X-KB-Workspace`; an API key always streams its own workspace.",
        querystring: EventsQuery,
        response: { 200: EventStreamResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request, reply) => {
      const key = request.apiKey;
      if (key && request.query.workspace !== undefined && request.query.workspace !== key.workspaceId) {
        throw new KbError(
          'bad-request',
          "The workspace parameter is for dashboard sessions; an API key streams its own workspace's events.",
        );
      }
      const header = request.headers['last-event-id'];
      const lastEventId = (Array.isArray(header) ? header[0] : header) ?? request.query.last_event_id;
      const types = request.query.types
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const raw = reply.raw;
      let started!: () => void;
      const headersSent = new Promise<void>((resolve) => {
        started = resolve;
      });
      let ended = false;
      let streaming = false;
      let heartbeat: NodeJS.Timeout | undefined;
      let subscription: { stop(): Promise<void> } | undefined;
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        open.delete(end);
        void subscription?.stop().catch(() => undefined);
        if (streaming && !raw.writableEnded) raw.end();
      };
      // Opened before the answer starts, so a bad request still gets its problem document.
      subscription = await events.open(requestContext(request), {
        ...(types ? { types } : {}),
        ...(request.query.document_id ? { documentId: request.query.document_id.toLowerCase() } : {}),
        ...(lastEventId ? { lastEventId } : {}),
        async send(event) {
          await headersSent;
          await write(raw, frame(event));
        },
        onEnd: () => end(),
      });
      if (ended) {
        // The log failed while the stream opened: nothing was sent yet, so the client gets a problem.
        void subscription.stop().catch(() => undefined);
        throw new KbError('service-unavailable', 'The event log could not be read; reconnect to try again.');
      }
      reply.hijack();
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': String(request.id),
      });
      streaming = true;
      raw.write(`retry: ${RETRY_MS}\n: connected\n\n`);
      open.add(end);
      raw.on('close', end);
      heartbeat = setInterval(() => {
        write(raw, ': heartbeat\n\n').catch(end);
      }, events.heartbeatMs);
      heartbeat.unref();
      started();
      // A client that left while the stream opened: its place is freed at once.
      if (raw.destroyed || request.raw.destroyed) end();
    },
  );
};

export default eventsRoutes;
