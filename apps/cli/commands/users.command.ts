import { parseArgs } from 'node:util';
import { ROLES, type Role } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { type Command, print, table } from './command.ts';
import { CommandLineError, refusedArgument } from './help.ts';

export const usersCommand: Command = {
  summary: 'Create and list dashboard accounts',
  usage: `kb users create --email <address> --workspace <id>[,<id>…] [--role owner|member] [--json]
kb users list [--json]`,
  async run(args, { config, out }) {
    const [action, ...rest] = args;
    const { values } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        workspace: { type: 'string' },
        role: { type: 'string', default: 'member' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action) throw new CommandLineError('name an action: create or list.');
    if (!['create', 'list'].includes(action)) {
      throw new CommandLineError(`unknown action "${action}"; the actions are create and list.`);
    }
    if (action === 'create') {
      if (!values.email || !values.workspace) {
        throw new CommandLineError('create needs --email and --workspace.');
      }
      if (!ROLES.includes(values.role as Role)) {
        throw new CommandLineError(`--role must be one of ${ROLES.join(', ')}, not "${values.role}".`);
      }
    }
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      if (action === 'create') {
        const { account, password } = await runtime.services.accounts
          .create({
            email: values.email as string,
            workspaceIds: (values.workspace as string).split(','),
            role: values.role as Role,
          })
          .catch(refusedArgument);
        if (values.json) {
          print(out, JSON.stringify({ ...account, password }));
        } else {
          print(out, `Created ${account.role} account ${account.email} for ${account.workspaces.join(', ')}.`);
          print(
            out,
            `\n  password: ${password}\n\nThis is the only time the password is shown; sign in at /dashboard/.`,
          );
        }
        return 0;
      }
      const users = await runtime.services.accounts.list();
      if (values.json) {
        print(out, JSON.stringify(users));
      } else if (users.length === 0) {
        print(out, 'No accounts.');
      } else {
        print(
          out,
          table([
            ['ID', 'EMAIL', 'ROLE', 'WORKSPACES', 'CREATED'],
            ...users.map((u) => [u.id, u.email, u.role, u.workspaces.join(','), u.created_at]),
          ]),
        );
      }
      return 0;
    } finally {
      await runtime.close();
    }
  },
};
