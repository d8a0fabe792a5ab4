import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { KbError } from '../../../core/errors/kb-error.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { createKbMcpServer, type McpAccess } from '../../mcp/mcp-server.ts';
import { type Command, print, untilSignal } from './command.ts';
import { fetchModelWithProgress } from './models.command.ts';

/**
 * `kb mcp`: the MCP tools over stdio, for assistants that start their servers as processes. It
 * opens the runtime of its configuration itself (no HTTP service needed; on the embedded runtime it
 * may run beside `kb serve` on the same data directory) and acts as one API key: the key's
 * workspace, its permissions and its rate limit, checked again on every tool call (so revoking the
 * key stops it). stdout carries the protocol only; everything else goes to stderr.
 */
export const mcpCommand: Command = {
  async run(args, { config, out, err }) {
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
      const { keys, rateLimiter } = runtime.services;
      if (!(await keys.authenticate(key))) {
        print(err, 'kb mcp: the API key is invalid or has been revoked.');
        return 1;
      }
      const access: McpAccess = async (permission) => {
        const record = await keys.authenticate(key);
        if (!record) throw new KbError('unauthorized', 'The API key is invalid or has been revoked.');
        const decision = rateLimiter.hit(record);
        if (!decision.allowed) {
          const retryAfter = Math.max(1, Math.ceil(decision.retryAfter));
          throw new KbError(
            'rate-limit-exceeded',
            `Rate limit of ${decision.limit} requests per minute exceeded for this key; retry in ${retryAfter} s.`,
            { retryAfter },
          );
        }
        if (!record.permissions.includes(permission)) {
          throw new KbError('forbidden', `This API key lacks the '${permission}' permission.`);
        }
        return { workspaceId: record.workspaceId, keyId: record.id, traceId: randomUUID() };
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
