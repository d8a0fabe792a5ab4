import { parseArgs } from 'node:util';
import { CONFIG_VARIABLES } from '../../../core/config/config.ts';
import { configTableMarkdown } from '../../../core/config/config-docs.ts';
import { type Command, print } from './command.ts';
import { dlqCommand } from './dlq.command.ts';
import { ingestCommand } from './ingest.command.ts';
import { keysCommand } from './keys.command.ts';
import { reindexCommand, retentionCommand, schemasCommand } from './maintenance.command.ts';
import { mcpCommand } from './mcp.command.ts';
import { modelsCommand } from './models.command.ts';
import { serveCommand, workerCommand } from './serve.command.ts';
import { sourcesCommand } from './sources.command.ts';
import { usersCommand } from './users.command.ts';
import { webhooksCommand } from './webhooks.command.ts';

const configCommand: Command = {
  summary: 'Print every configuration variable with its default and meaning',
  usage: 'kb config [--markdown | --json]',
  async run(args, { out }) {
    const { values } = parseArgs({
      args,
      options: { markdown: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
    });
    if (values.json) {
      print(
        out,
        JSON.stringify(CONFIG_VARIABLES.map((v) => ({ name: v.name, default: v.default, description: v.description }))),
      );
    } else if (values.markdown) {
      print(out, configTableMarkdown());
    } else {
      for (const v of CONFIG_VARIABLES) print(out, `${v.name}=${v.default}\n    ${v.description}`);
    }
    return 0;
  },
};

export const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
  worker: workerCommand,
  keys: keysCommand,
  users: usersCommand,
  ingest: ingestCommand,
  sources: sourcesCommand,
  webhooks: webhooksCommand,
  schemas: schemasCommand,
  reindex: reindexCommand,
  retention: retentionCommand,
  dlq: dlqCommand,
  config: configCommand,
  models: modelsCommand,
  mcp: mcpCommand,
};

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `kb — knowledge-base document service\n\nUsage: kb <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nEvery command reads its configuration from KB_* environment variables (see \`kb config\`).\n\`kb help <command>\` or \`kb <command> --help\` explains one command; \`kb --version\` prints the version.\n`;
}
