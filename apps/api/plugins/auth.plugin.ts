/**
 * Authentication, rate limiting and permissions for the resource routes, in that order, before
 * the body is read:
 * 1. The key is taken from `X-API-Key`, or else from `Authorization: Bearer`. When `X-API-Key` is
 *    present it is the only one considered, even if a valid bearer key is also sent.
 *    Missing, malformed, unknown or revoked → 401.
 * 2. The request is counted against the key's plan; every authenticated response (including
 *    403/404/422 and the 429 itself) carries `X-RateLimit-Limit/Remaining/Reset`; over the limit →
 *    429 with `Retry-After`. (On `/mcp`, each JSON-RPC call of a batch counts; see `mcp.routes.ts`.)
 * 3. The route's `config.permission` (or one of them, for a list) must be among the key's
 *    permissions, else 403.
 *
 * A scoped token (a JWT minted by `POST /tokens`, see `scoped-tokens.service.ts`) is presented
 * the same way. It must check out (signature, expiry) and its parent key must be active, else 401;
 * it counts against its parent key's rate limit, and the access log names the parent key. It may
 * call only routes that opt in with `config.scopedTokens` (reads and search), with the
 * permissions it carries, else 403; the services narrow everything it reads to its rules.
 *
 * A request without any key may instead carry a dashboard session cookie (see
 * `lib/dashboard-session.ts`): the signed-in person acts with every permission on one of their
 * workspaces (`X-KB-Workspace`, or the `workspace` query parameter on a route that opts in with
 * `config.sessionWorkspaceQuery`), state changes need the session's CSRF token, and no rate limit
 * applies.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { AccessScope } from '../../../core/model/access-scope.model.ts';
import type { ApiKeyRecord, Permission } from '../../../core/model/account-records.model.ts';
import { looksLikeToken } from '../../../core/services/scoped-tokens.service.ts';
import type { RequestContext, Services } from '../../../core/services/services.ts';
import { noteKey } from '../lib/access-log.ts';
import { type DashboardSession, dashboardSession } from '../lib/dashboard-session.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Permission a key needs for this route (a list: any one of them); every resource route declares one. */
    permission?: Permission | readonly Permission[];
    /** A scoped token may call this route (a read or a search whose services apply its rules). */
    scopedTokens?: boolean;
    /**
     * A dashboard session may name its workspace in the `workspace` query parameter (checked like
     * `X-KB-Workspace`), for browser clients that cannot set headers (`EventSource`). A key's
     * workspace is its own whatever the parameter says (the route decides how to answer one).
     */
    sessionWorkspaceQuery?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated key, set by the auth plugin on resource routes. */
    apiKey: ApiKeyRecord | null;
    /** The signed-in dashboard account, when the request came with a session cookie instead of a key. */
    account: DashboardSession | null;
    /** The rules of the scoped token the request came with (`apiKey` is then its parent key). */
    scope: AccessScope | null;
  }
}

export interface AuthPluginOptions {
  readonly services: Pick<Services, 'keys' | 'rateLimiter' | 'accounts' | 'tokens'>;
}

/** The key a request presents: `X-API-Key` when that header is present at all, else a bearer token. */
export function presentedKey(headers: FastifyRequest['headers']): string | null {
  const apiKey = headers['x-api-key'];
  if (apiKey !== undefined) {
    const value = Array.isArray(apiKey) ? apiKey[0] : apiKey;
    return value?.trim() ? value.trim() : '';
  }
  const authorization = headers.authorization;
  if (typeof authorization !== 'string') return null;
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization);
  return match ? match[1]! : '';
}

/** The services' view of who is asking. Only valid on authenticated routes. */
export function requestContext(request: FastifyRequest): RequestContext {
  const account = request.account;
  if (account) {
    return { workspaceId: account.workspaceId, keyId: account.user.id, actorType: 'user', traceId: request.id };
  }
  const key = request.apiKey;
  if (!key) throw new KbError('unauthorized', 'This endpoint needs an API key.');
  return {
    workspaceId: key.workspaceId,
    keyId: key.id,
    traceId: request.id,
    ...(request.scope ? { scope: request.scope } : {}),
  };
}

/**
 * Steps 1 and 2 for a presented key (see the file's comment): the active key record, with the
 * rate-limit headers set on the reply; `unauthorized` for an unusable key, `rate-limit-exceeded`
 * over the plan's limit. Shared with the MCP endpoint, which checks permissions per tool and
 * counts each JSON-RPC call of a batch as a request (`requests`: all are counted, or none).
 */
export async function authenticateKey(
  presented: string,
  request: FastifyRequest,
  reply: FastifyReply,
  services: Pick<Services, 'keys' | 'rateLimiter'>,
  requests = 1,
): Promise<ApiKeyRecord> {
  const key = presented === '' ? null : await services.keys.authenticate(presented);
  if (!key) throw new KbError('unauthorized', 'The API key is invalid or has been revoked.');
  noteKey(request, key);
  count(key, reply, services.rateLimiter, requests);
  return key;
}

/**
 * Steps 1 and 2 for a presented scoped token: the token's scope and its parent key (active, of the
 * token's workspace), with the request counted against the parent key; `unauthorized` for a
 * malformed, tampered, expired or foreign token and for a revoked parent.
 */
export async function authenticateToken(
  presented: string,
  request: FastifyRequest,
  reply: FastifyReply,
  services: Pick<Services, 'keys' | 'rateLimiter' | 'tokens'>,
  requests = 1,
): Promise<{ key: ApiKeyRecord; scope: AccessScope }> {
  const verified = await services.tokens.verify(presented);
  if (!verified) throw new KbError('unauthorized', 'The token is invalid, has been tampered with or has expired.');
  const key = await services.keys.activeKey(verified.scope.parentKeyId);
  if (!key || key.workspaceId !== verified.workspaceId) {
    throw new KbError('unauthorized', 'The API key that minted this token has been revoked.');
  }
  noteKey(request, key);
  count(key, reply, services.rateLimiter, requests);
  return { key, scope: verified.scope };
}

/** The permissions a scoped token has: those it carries that its parent key still has. */
export function tokenPermissions(key: ApiKeyRecord, scope: AccessScope): Permission[] {
  return scope.permissions.filter((p) => key.permissions.includes(p));
}

/** Step 2: counts the request(s) against the key, sets the rate-limit headers, refuses over the limit. */
function count(key: ApiKeyRecord, reply: FastifyReply, rateLimiter: Services['rateLimiter'], requests: number): void {
  const decision = rateLimiter.hit(key, undefined, requests);
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(Math.max(0, decision.remaining)));
  reply.header('x-ratelimit-reset', String(decision.reset));
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfter));
    throw new KbError('rate-limit-exceeded', refusal(decision.limit, decision.remaining, requests, retryAfter), {
      retryAfter,
    });
  }
}

/** Why the limiter refused: the limit, and for a batch how many calls it held against how many were left. */
function refusal(limit: number, remaining: number, requests: number, retryAfter: number): string {
  if (requests <= 1) {
    return `Rate limit of ${limit} requests per minute exceeded for this key; retry in ${retryAfter} s.`;
  }
  if (requests > limit) {
    return `This batch holds ${requests} calls, each counted as a request, more than this key's whole rate limit of ${limit} requests per minute; send at most ${limit} calls per batch.`;
  }
  return `This batch holds ${requests} calls, each counted as a request, but only ${remaining} of this key's ${limit} requests per minute are left; nothing was run. Retry in ${retryAfter} s, or send fewer calls per batch.`;
}

async function authPlugin(app: FastifyInstance, opts: AuthPluginOptions) {
  const { accounts } = opts.services;
  if (!app.hasRequestDecorator('apiKey')) app.decorateRequest('apiKey', null);
  if (!app.hasRequestDecorator('account')) app.decorateRequest('account', null);
  if (!app.hasRequestDecorator('scope')) app.decorateRequest('scope', null);

  app.addHook('onRoute', (route) => {
    if (!route.config?.permission) {
      throw new Error(`Route ${route.method} ${route.url} must declare config.permission`);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const presented = presentedKey(request.headers);
    if (presented === null) {
      const account = await dashboardSession(request, accounts);
      if (account) {
        request.account = account;
        return;
      }
      throw new KbError('unauthorized', 'Missing API key: send it in X-API-Key or as Authorization: Bearer <key>.');
    }
    const config = request.routeOptions.config;
    const needed: readonly Permission[] =
      config.permission === undefined ? [] : Array.isArray(config.permission) ? config.permission : [config.permission];
    const named = needed.map((p) => `'${p}'`).join(' or ') || "'unknown'";
    if (looksLikeToken(presented)) {
      const { key, scope } = await authenticateToken(presented, request, reply, opts.services);
      if (!config.scopedTokens) {
        throw new KbError(
          'forbidden',
          'A scoped token may only read and search documents; this endpoint needs an API key.',
        );
      }
      const held = tokenPermissions(key, scope);
      if (!needed.some((p) => held.includes(p)))
        throw new KbError('forbidden', `This token lacks the ${named} permission.`);
      request.apiKey = key;
      request.scope = scope;
      return;
    }
    const key = await authenticateKey(presented, request, reply, opts.services);
    if (!needed.some((p) => key.permissions.includes(p))) {
      throw new KbError('forbidden', `This API key lacks the ${named} permission.`);
    }
    request.apiKey = key;
  });
}

export default fp(authPlugin, { name: 'kb-auth', fastify: '5.x' });
