/**
 * Request ids: one UUID per request, used as the problem `trace_id` and the audit `trace_id`, and
 * echoed in `X-Request-Id` on every response. An incoming `X-Request-Id` is honoured only when it
 * is a UUID (so a caller can correlate its own logs); anything else is replaced by a fresh UUID v7.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { v7 as uuidv7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Fastify `genReqId`: the caller's `X-Request-Id` when it is a UUID, else a new UUID v7. */
export function generateRequestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return isUuid(value) ? value.toLowerCase() : uuidv7();
}

async function requestIdPlugin(app: FastifyInstance) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}

export default fp(requestIdPlugin, { name: 'kb-request-id', fastify: '5.x' });
