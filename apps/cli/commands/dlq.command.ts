import { parseArgs } from 'node:util';
import { STAGE_NAMES, type StageName } from '../../../core/events/events.ts';
import { silentLogger } from '../../../core/model/logger.model.ts';
import { createRuntime } from '../../../core/runtime/runtime.ts';
import type { DeadLetterCountView, DeadLetterView } from '../../../core/services/dead-letters.service.ts';
import { type Command, print, table } from './command.ts';
import { CommandLineError } from './help.ts';

const ACTIONS = ['list', 'replay'] as const;

function countsLine(counts: readonly DeadLetterCountView[]): string {
  return counts.map((c) => `${c.stage} ${c.pending} pending of ${c.total}`).join(', ');
}

function lettersTable(letters: readonly DeadLetterView[]): string {
  return table([
    ['DEAD LETTER', 'STAGE', 'WORKSPACE', 'DOCUMENT', 'VERSION', 'ERROR', 'AT', 'REPLAY'],
    ...letters.map((l) => [
      l.id,
      l.stage,
      l.workspace_id ?? '-',
      l.document_id ?? '-',
      l.version === null ? '-' : String(l.version),
      `${l.error_code}: ${l.error_message.length > 60 ? `${l.error_message.slice(0, 57)}...` : l.error_message}`,
      l.dead_lettered_at,
      l.replay ? `${l.replay.outcome} ${l.replay.at}` : 'pending',
    ]),
  ]);
}

/**
 * `kb dlq`: the stages' dead letters, for the operator of the service. Like `kb keys`, it works on
 * the configured runtime directly (every workspace, `--workspace` narrows it); the HTTP API offers
 * the same to a workspace's owners and write keys (`/api/v1/admin/dead-letters`).
 */
export const dlqCommand: Command = {
  async run(args, { loadConfig, out }) {
    const config = await loadConfig();
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        stage: { type: 'string' },
        workspace: { type: 'string' },
        pending: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action || !(ACTIONS as readonly string[]).includes(action)) {
      throw new CommandLineError(
        action
          ? `unknown action "${action}"; the actions are ${ACTIONS.join(' and ')}.`
          : `name an action: ${ACTIONS.join(' or ')}.`,
      );
    }
    if (positionals.length > 0) throw new CommandLineError(`unexpected argument "${positionals[0]}".`);
    if (values.stage !== undefined && !(STAGE_NAMES as readonly string[]).includes(values.stage)) {
      throw new CommandLineError(`--stage must be one of ${STAGE_NAMES.join(', ')}, not "${values.stage}".`);
    }
    if (action === 'replay' && values.pending) throw new CommandLineError('--pending is an option of list.');
    const filter = {
      ...(values.stage === undefined ? {} : { stage: values.stage as StageName }),
      ...(values.workspace === undefined ? {} : { workspaceId: values.workspace }),
    };
    const runtime = await createRuntime(config, { stages: 'none', logger: silentLogger });
    try {
      if (action === 'list') {
        const listed = await runtime.services.deadLetters.list({
          ...filter,
          state: values.pending ? 'pending' : 'all',
        });
        if (values.json) {
          print(out, JSON.stringify(listed));
          return 0;
        }
        if (listed.dead_letters.length === 0)
          print(out, values.pending ? 'No pending dead letters.' : 'No dead letters.');
        else print(out, lettersTable(listed.dead_letters));
        print(out, `Dead letters: ${countsLine(listed.counts)}.`);
        return 0;
      }
      const report = await runtime.services.deadLetters.replay(filter, 'cli');
      if (values.json) {
        print(out, JSON.stringify(report));
        return 0;
      }
      if (report.dead_letters.length === 0) {
        print(out, 'No pending dead letters: nothing to replay.');
        return 0;
      }
      print(out, lettersTable(report.dead_letters));
      print(
        out,
        `Replayed ${report.replayed} dead letter${report.replayed === 1 ? '' : 's'}` +
          (report.skipped > 0 ? `; skipped ${report.skipped} with nothing left to re-drive` : '') +
          '. Replayed events are processed again by the running stages (kb serve or kb worker).',
      );
      return 0;
    } finally {
      await runtime.close();
    }
  },
};
