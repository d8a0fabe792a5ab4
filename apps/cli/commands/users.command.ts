import { parseArgs } from 'node:util';
import { KbError } from '../../../core/errors/kb-error.ts';
import { ROLES, type Role } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { type Command, print, table } from './command.ts';

export const usersCommand: Command = {
  summary: 'Create and list dashboard accounts',
  usage: `kb users create --email <address> --workspace <id>[,<id>…] [--role owner|member] [--json]
kb users list [--json]`,
  async run(args, { config, out, err }) {
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
    if (!action || !['create', 'list'].includes(action)) {
      print(err, `Usage:\n${this.usage}`);
      return 2;
    }
    if (action === 'create') {
      if (!values.email || !values.workspace) {
        print(err, 'kb users create needs --email and --workspace.');
        return 2;
      }
      if (!ROLES.includes(values.role as Role)) {
        throw new KbError('validation-error', `--role must be one of ${ROLES.join(', ')}.`);
      }
    }
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      if (action === 'create') {
        const { account, password } = await runtime.services.accounts.create({
          email: values.email as string,
          workspaceIds: (values.workspace as string).split(','),
          role: values.role as Role,
        });
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
