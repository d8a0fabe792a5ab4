/**
 * The MCP server over Streamable HTTP at `/mcp`, stateless: every POST carries one JSON-RPC
 * message (or batch) and is answered on its own, so any number of API processes can serve it.
 * The caller authenticates exactly as on the resource routes (`X-API-Key` or `Authorization:
 * Bearer`, the same keys, the same rate limit); each tool then checks the permission it needs.
 * A scoped token is accepted too: its tools see only what its rules let through (the services apply
 * them), with the token's permissions, counted against its parent key.
 * Every JSON-RPC call counts against the rate limit as one request: a batch of 100 tool calls
 * counts 100 (a POST at least one), all of them or none, before any runs — a batch larger than
 * what the key has left is a 429 problem like any refused request, and nothing in it runs.
 * GET (a server-to-client stream) and DELETE (ending a session) have nothing to do without
 * sessions and answer 405. Not part of the OpenAPI document: MCP clients describe it themselves.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';
import { looksLikeToken } from '../../../core/services/scoped-tokens.service.ts';
import type { Services } from '../../../core/services/services.ts';
import { createKbMcpServer, type McpAccess } from '../../mcp/mcp-server.ts';
import { authenticateKey, authenticateToken, presentedKey, tokenPermissions } from '../plugins/auth.plugin.ts';

export interface McpRoutesOptions {
  readonly services: Services;
  readonly version: string;
}

export const MCP_PATH = '/mcp';

/**
 * The JSON-RPC requests (messages with a method and an id: calls the server answers) a POST
 * carries, at least one: a batch counts each; notifications and responses count nothing.
 */
export function callsIn(body: unknown): number {
  if (!Array.isArray(body)) return 1;
  const calls = body.filter(
    (m) => typeof m === 'object' && m !== null && typeof (m as { method?: unknown }).method === 'string' && 'id' in m,
  ).length;
  return Math.max(1, calls);
}

export default async function mcpRoutes(app: FastifyInstance, opts: McpRoutesOptions): Promise<void> {
  const { services } = opts;

  app.post(MCP_PATH, { schema: { hide: true } }, async (request, reply) => {
    const presented = presentedKey(request.headers);
    if (presented === null) {
      throw new KbError('unauthorized', 'Missing API key: send it in X-API-Key or as Authorization: Bearer <key>.');
    }
    // A scoped token: its parent key is counted, its permissions checked, its rules carried to every tool.
    const { key, scope } = looksLikeToken(presented)
      ? await authenticateToken(presented, request, reply, services, callsIn(request.body))
      : { key: await authenticateKey(presented, request, reply, services, callsIn(request.body)), scope: null };
    const held = scope ? tokenPermissions(key, scope) : key.permissions;
    const access: McpAccess = async (permission) => {
      if (!held.includes(permission)) {
        throw new KbError('forbidden', `This ${scope ? 'token' : 'API key'} lacks the '${permission}' permission.`);
      }
      return { workspaceId: key.workspaceId, keyId: key.id, traceId: request.id, ...(scope ? { scope } : {}) };
    };
    const server = createKbMcpServer({
      services,
      version: opts.version,
      access,
      onInternalError: (error) => request.log.error({ err: error }, 'MCP tool failed'),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the response itself: carry over the headers set so far (request id, rate limit).
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: MCP_PATH,
      schema: { hide: true },
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        throw new KbError(
          'method-not-allowed',
          `${method} ${MCP_PATH} is not served: this MCP endpoint is stateless, so every message is a POST.`,
        );
      },
    });
  }
}
