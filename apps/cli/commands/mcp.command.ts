import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { AccessScope } from '../../../core/model/access-scope.model.ts';
import type { ApiKeyRecord } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { looksLikeToken } from '../../../core/services/scoped-tokens.service.ts';
import { createKbMcpServer, type McpAccess } from '../../mcp/mcp-server.ts';
import { type Command, print, untilSignal } from './command.ts';
import { fetchModelWithProgress } from './models.command.ts';

/**
 * `kb mcp`: the MCP tools over stdio, for assistants that start their servers as processes. It
 * opens the runtime of its configuration itself (no HTTP service needed; on the embedded runtime it
 * may run beside `kb serve` on the same data directory) and acts as one API key: the key's
 * workspace, its permissions and its rate limit, checked again on every tool call (so revoking the
 * key stops it). A scoped token works too, as its parent key within the token's rules. stdout carries the protocol only; everything else goes to stderr.
 */
export const mcpCommand: Command = {
  async run(args, { loadConfig, out, err }) {
    const config = await loadConfig();
    const { values } = parseArgs({ args, options: { key: { type: 'string' } } });
    const key = values.key ?? config.client.apiKey;
    if (!key) {
      print(err, 'kb mcp needs an API key: --key ink_…, KB_API_KEY or KB_KEY.');
      return 2;
    }
    // Search embeds queries: have the model ready before the first call.
    print(err, await fetchModelWithProgress(config, err));
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      const { keys, rateLimiter, tokens } = runtime.services;
      // A scoped token acts as its parent key, within its rules and with its permissions.
      const caller = async (): Promise<{ record: ApiKeyRecord; scope: AccessScope | null } | null> => {
        if (!looksLikeToken(key)) {
          const record = await keys.authenticate(key);
          return record ? { record, scope: null } : null;
        }
        const verified = await tokens.verify(key);
        const record = verified ? await keys.activeKey(verified.scope.parentKeyId) : null;
        if (!verified || !record || record.workspaceId !== verified.workspaceId) return null;
        return { record, scope: verified.scope };
      };
      if (!(await caller())) {
        print(
          err,
          looksLikeToken(key)
            ? 'kb mcp: the token is invalid or expired, or its key has been revoked.'
            : 'kb mcp: the API key is invalid or has been revoked.',
        );
        return 1;
      }
      const access: McpAccess = async (permission) => {
        const found = await caller();
        if (!found) throw new KbError('unauthorized', 'The API key (or token) is invalid, expired or revoked.');
        const { record, scope } = found;
        const decision = rateLimiter.hit(record);
        if (!decision.allowed) {
          const retryAfter = Math.max(1, Math.ceil(decision.retryAfter));
          throw new KbError(
            'rate-limit-exceeded',
            `Rate limit of ${decision.limit} requests per minute exceeded for this key; retry in ${retryAfter} s.`,
            { retryAfter },
          );
        }
        const held = scope ? scope.permissions.filter((p) => record.permissions.includes(p)) : record.permissions;
        if (!held.includes(permission)) {
          throw new KbError('forbidden', `This ${scope ? 'token' : 'API key'} lacks the '${permission}' permission.`);
        }
        return {
          workspaceId: record.workspaceId,
          keyId: record.id,
          traceId: randomUUID(),
          ...(scope ? { scope } : {}),
        };
      };
      const server = createKbMcpServer({
        services: runtime.services,
        version: runtime.version,
        access,
        onInternalError: (error) =>
          print(err, `kb mcp: a tool failed: ${error instanceof Error ? error.message : String(error)}`),
      });
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
        process.stdin.once('end', () => resolve());
      });
      await server.connect(new StdioServerTransport(process.stdin, out));
      print(err, `kb mcp: serving workspace tools over stdio (${config.runtime} runtime).`);
      await Promise.race([closed, untilSignal()]);
      await server.close();
      return 0;
    } finally {
      await runtime.close();
    }
  },
};
