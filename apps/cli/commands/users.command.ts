import { parseArgs } from 'node:util';
import { ROLES, type Role } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { type Command, print, table } from './command.ts';
import { CommandLineError, refusedArgument } from './help.ts';

/** A password given on standard input: everything up to the end, without the final line break. */
async function passwordFromStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(typeof part === 'string' ? Buffer.from(part) : part);
  return Buffer.concat(parts)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const ACTIONS = ['create', 'list', 'reset-password'];

export const usersCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const [action, ...rest] = args;
    const { values } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        workspace: { type: 'string' },
        role: { type: 'string', default: 'member' },
        'password-stdin': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action) throw new CommandLineError('name an action: create, list or reset-password.');
    if (!ACTIONS.includes(action)) {
      throw new CommandLineError(`unknown action "${action}"; the actions are create, list and reset-password.`);
    }
    if (action === 'reset-password' && !values.email) throw new CommandLineError('reset-password needs --email.');
    if (action === 'create') {
      if (!values.email || !values.workspace) {
        throw new CommandLineError('create needs --email and --workspace.');
      }
      if (!ROLES.includes(values.role as Role)) {
        throw new CommandLineError(`--role must be one of ${ROLES.join(', ')}, not "${values.role}".`);
      }
    }
    const chosen = action === 'create' && values['password-stdin'] ? await passwordFromStdin() : undefined;
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      if (action === 'create') {
        const { account, password } = await runtime.services.accounts
          .create({
            email: values.email as string,
            workspaceIds: (values.workspace as string).split(','),
            role: values.role as Role,
            ...(chosen === undefined ? {} : { password: chosen }),
          })
          .catch(refusedArgument);
        if (values.json) {
          print(out, JSON.stringify(chosen === undefined ? { ...account, password } : account));
        } else {
          print(out, `Created ${account.role} account ${account.email} for ${account.workspaces.join(', ')}.`);
          print(
            out,
            chosen === undefined
              ? `\n  password: ${password}\n\nThis is the only time the password is shown; sign in at /dashboard/, which asks for a new password first.`
              : 'Sign in at /dashboard/ with the password given.',
          );
        }
        return 0;
      }
      if (action === 'reset-password') {
        const { account, password } = await runtime.services.accounts.resetPassword(values.email as string);
        if (values.json) {
          print(out, JSON.stringify({ ...account, password }));
        } else {
          print(out, `Reset the password of ${account.email}; its sessions are signed out.`);
          print(
            out,
            `\n  password: ${password}\n\nThis is the only time the password is shown; sign in at /dashboard/, which asks for a new password first.`,
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
