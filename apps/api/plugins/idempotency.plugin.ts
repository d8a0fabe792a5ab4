/**
 * `Idempotency-Key` on the writes of the resource API (IETF draft "The Idempotency-Key HTTP
 * Header Field", as Stripe does it). A route opts in with `config.idempotent`:
 * - `body`: the key is claimed before the handler runs (after authentication and the schema's
 *   validation), the request being its method, its path within the API, its query and its JSON body;
 * - `form` (multipart uploads): the handler claims the key itself with {@link claimIdempotencyKey}
 *   once the form is read, the request being the file's SHA-256, size, name and type and the form
 *   fields (computed while the file streams to staging).
 *
 * The first request with a key runs; its answer is stored before it is sent (below), and every
 * later request with the same key and the same request gets that answer again with
 * `Idempotent-Replayed: true`, without running. The same key with another request is 422; a
 * request whose key's first request is still running waits for it (`KB_IDEMPOTENCY_WAIT_MS`),
 * then is 409 with `Retry-After`. A malformed key is 400 before the body is read. Keys belong to
 * the workspace and API key (or dashboard account) that sent them. Requests without the header
 * run as always.
 *
 * Which answers are stored: everything below 500 except those that refuse the request as sent or
 * ask to come back later (400, 408, 413, 422, 429) — the request did nothing, so the key is given
 * back and a corrected request may use it. A 5xx is not stored either: the retry runs again.
 *
 * A write stores the key with what it writes (`writeKeyOf`, the services' `WriteKey`): a request
 * that takes over a claim that lapsed (its process died before storing the answer) or was given
 * back after a 5xx looks for what that request wrote first, and, found, answers as it would have
 * (the same status and body shape) instead of writing again; that answer is then stored.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  fingerprintOf,
  type HeldKey,
  type IdempotencyService,
  type StoredResponse,
  type WriteKey,
} from '../../../core/services/idempotency.service.ts';
import type { Services } from '../../../core/services/services.ts';
import { requestContext } from './auth.plugin.ts';
import { requestPath } from './problem.plugin.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is a write that takes an `Idempotency-Key` (see `idempotency.plugin.ts`). */
    idempotent?: 'body' | 'form';
  }
  interface FastifyRequest {
    /** The request's checked `Idempotency-Key` and its path within the API, on routes that take one. */
    idempotency: { readonly key: string; readonly path: string; held: HeldKey | null } | null;
  }
}

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

/** Statuses below 500 that are not stored: the request as sent was refused, or should come back later. */
const GIVEN_BACK = new Set([400, 408, 413, 422, 429]);

/** Response headers a replay repeats; the rest (request id, rate limits) belong to each request. */
const REPLAYED_HEADERS = ['content-type', 'location'];

export interface IdempotencyPluginOptions {
  readonly services: Pick<Services, 'idempotency'>;
  /** The prefix the resource routes are registered under (`/api/v1`, `/v1`): both name one resource. */
  readonly apiPrefix: string;
}

/**
 * Claims the request's key (if it sent one) for the request described by `body` (anything JSON:
 * the route's own description of what it received). The stored answer to send instead with
 * {@link sendReplay} (the caller must not run the write); null when the request should run (its
 * answer is stored as it is sent). Throws `idempotency-key-reused` or `idempotency-key-in-use`.
 */
export async function claimIdempotencyKey(
  service: IdempotencyService,
  request: FastifyRequest,
  body: unknown,
): Promise<StoredResponse | null> {
  const idempotency = request.idempotency;
  if (!idempotency) return null;
  const fingerprint = fingerprintOf({ method: request.method, path: idempotency.path, body });
  const start = await service.begin(requestContext(request), idempotency.key, fingerprint);
  if (start.replay !== null) return start.replay;
  idempotency.held = start;
  return null;
}

/**
 * The key a write sent with an `Idempotency-Key` stores with what it writes, and whether it
 * resumes a request with the key cut off before it stored its answer; undefined without a key.
 */
export function writeKeyOf(request: FastifyRequest): WriteKey | undefined {
  return request.idempotency?.held?.write;
}

/** Sends a stored answer again: its status, body and content type, with `Idempotent-Replayed: true`. */
export function sendReplay(reply: FastifyReply, stored: StoredResponse): FastifyReply {
  reply.code(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) reply.header(name, value);
  reply.header(REPLAYED_HEADER, 'true');
  return reply.send(stored.body === '' ? undefined : stored.body);
}

/** The answer as it goes out, for storing; null when it cannot be stored as text. */
function storedResponse(reply: FastifyReply, payload: unknown): StoredResponse | null {
  const status = reply.statusCode;
  let body: string;
  if (status === 204 || status === 304 || payload === undefined || payload === null) body = '';
  else if (typeof payload === 'string') body = payload;
  else if (Buffer.isBuffer(payload)) body = payload.toString('utf8');
  else return null;
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status, headers, body };
}

async function idempotencyPlugin(app: FastifyInstance, opts: IdempotencyPluginOptions) {
  const service = opts.services.idempotency;
  if (!app.hasRequestDecorator('idempotency')) app.decorateRequest('idempotency', null);

  // After authentication (registered after the auth plugin): a malformed key is refused before
  // the body is read.
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config.idempotent) return;
    const sent = request.headers[IDEMPOTENCY_KEY_HEADER];
    if (sent === undefined) return;
    const value = Array.isArray(sent) ? sent.join(', ') : sent;
    const path = requestPath(request);
    request.idempotency = {
      key: service.parseKey(value),
      path: path.startsWith(`${opts.apiPrefix}/`) ? path.slice(opts.apiPrefix.length) : path,
      held: null,
    };
  });

  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.idempotent !== 'body' || !request.idempotency) return;
    const stored = await claimIdempotencyKey(service, request, { query: request.query, body: request.body ?? null });
    if (stored) return sendReplay(reply, stored);
  });

  // Stored before it is sent: a client that has the answer and asks again gets it again.
  app.addHook('onSend', async (request, reply, payload) => {
    const held = request.idempotency?.held;
    if (!held) return payload;
    if (request.idempotency) request.idempotency.held = null;
    const response = storedResponse(reply, payload);
    try {
      if (response === null || response.status >= 500 || GIVEN_BACK.has(response.status)) {
        await held.release();
      } else if (!(await held.complete(response))) {
        request.log.warn('the Idempotency-Key lapsed before the answer was stored; a retry runs again');
      }
    } catch (err) {
      // The answer goes out all the same; the key, neither stored nor given back, lapses after
      // KB_REQUEST_TIMEOUT_MS (a retry meanwhile waits, then gets 409).
      request.log.error({ err }, 'could not store the answer of an Idempotency-Key');
    }
    return payload;
  });
}

export default fp(idempotencyPlugin, { name: 'kb-idempotency', fastify: '5.x', dependencies: ['kb-auth'] });
