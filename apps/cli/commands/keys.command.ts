import { parseArgs } from 'node:util';
import { type Permission, PLANS, type Plan } from '../../../core/model/account-records.model.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import { type Command, print, table } from './command.ts';
import { CommandLineError, refusedArgument } from './help.ts';

export const keysCommand: Command = {
  async run(args, { loadConfig, out, err }) {
    const config = await loadConfig();
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        workspace: { type: 'string' },
        name: { type: 'string' },
        permissions: { type: 'string' },
        plan: { type: 'string', default: 'starter' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action) throw new CommandLineError('name an action: create, list or revoke.');
    if (!['create', 'list', 'revoke'].includes(action)) {
      throw new CommandLineError(`unknown action "${action}"; the actions are create, list and revoke.`);
    }
    if (action === 'create' && !PLANS.includes(values.plan as Plan)) {
      throw new CommandLineError(`--plan must be one of ${PLANS.join(', ')}, not "${values.plan}".`);
    }
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      if (action === 'create') {
        if (!values.workspace || !values.name || !values.permissions) {
          throw new CommandLineError('create needs --workspace, --name and --permissions.');
        }
        const permissions = values.permissions
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean) as Permission[];
        const { key, record } = await runtime.services.keys
          .create({ workspaceId: values.workspace, name: values.name, permissions, plan: values.plan as Plan })
          .catch(refusedArgument);
        if (values.json) {
          print(out, JSON.stringify({ ...record, key }));
        } else {
          print(out, `Created key ${record.id} (${record.name}) for workspace ${record.workspace_id}.`);
          print(out, `Permissions: ${record.permissions.join(', ')}; plan: ${record.plan}.`);
          print(out, `\n  ${key}\n\nThis is the only time the key is shown; store it now.`);
        }
        return 0;
      }
      if (action === 'list') {
        const keys = await runtime.services.keys.list(values.workspace);
        if (values.json) {
          print(out, JSON.stringify(keys));
        } else if (keys.length === 0) {
          print(out, 'No keys.');
        } else {
          print(
            out,
            table([
              ['ID', 'NAME', 'PREFIX', 'WORKSPACE', 'PERMISSIONS', 'PLAN', 'CREATED', 'REVOKED', 'LAST USED'],
              ...keys.map((k) => [
                k.id,
                k.name,
                k.prefix,
                k.workspace_id,
                k.permissions.join(','),
                k.plan,
                k.created_at,
                k.revoked_at ?? '-',
                k.last_used_at ?? '-',
              ]),
            ]),
          );
        }
        return 0;
      }
      const id = positionals[0];
      if (!id) throw new CommandLineError('revoke needs the key id (see kb keys list).');
      const before = (await runtime.services.keys.list()).find((k) => k.id === id);
      if (before?.revoked_at) {
        if (values.json) print(out, JSON.stringify({ ...before, already_revoked: true }));
        print(err, `Key ${id} was already revoked at ${before.revoked_at}; nothing changed.`);
        return 1;
      }
      const revoked = before ? await runtime.services.keys.revoke(id) : false;
      if (!revoked) {
        print(err, `No key with id ${id} (see kb keys list).`);
        return 1;
      }
      if (values.json) {
        const after = (await runtime.services.keys.list()).find((k) => k.id === id);
        print(out, JSON.stringify({ ...after, already_revoked: false }));
      } else {
        print(out, `Revoked key ${id}. API processes stop accepting it within ${config.keyCacheMs / 1000} s.`);
      }
      return 0;
    } finally {
      await runtime.close();
    }
  },
};
