import { parseArgs } from 'node:util';
import { type Command, print, table } from './command.ts';
import { CommandLineError } from './help.ts';
import { checkService, networkProblem } from './service-client.ts';

const ACTIONS = ['add', 'list', 'remove', 'deliveries'] as const;

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  secret?: string;
}

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  document_id: string | null;
  source_id: string | null;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  attempt_log: Array<{ status_code: number | null; error: string | null }>;
}

/** `kb webhooks`: the webhook endpoints of the key's workspace, over the HTTP API. */
export const webhooksCommand: Command = {
  async run(args, { client, out, err }) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: client.url },
        key: { type: 'string' },
        events: { type: 'string', default: '*' },
        description: { type: 'string' },
        limit: { type: 'string', default: '50' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action || !(ACTIONS as readonly string[]).includes(action)) {
      throw new CommandLineError(
        action
          ? `unknown action "${action}"; the actions are ${ACTIONS.join(', ')}.`
          : `name an action: ${ACTIONS.join(', ')}.`,
      );
    }
    const key = values.key ?? client.apiKey;
    if (!key)
      throw new CommandLineError(
        'kb webhooks needs an API key with write permission: --key ink_…, KB_API_KEY or KB_KEY.',
      );
    if ((action === 'add' || action === 'remove' || action === 'deliveries') && positionals.length !== 1) {
      throw new CommandLineError(
        `kb webhooks ${action} takes exactly one ${action === 'add' ? 'receiver URL' : 'webhook id'}.`,
      );
    }
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      throw new CommandLineError(`--limit must be a whole number from 1 to 200, not "${values.limit}".`);
    }
    const base = String(values.url).replace(/\/+$/, '');
    const unreachable = await checkService(base);
    if (unreachable) {
      print(err, `kb webhooks: ${unreachable}`);
      return 1;
    }
    const call = async (method: string, path: string, body?: unknown) => {
      let response: Response;
      try {
        response = await fetch(`${base}/api/v1${path}`, {
          method,
          headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        throw new Error(`the service did not answer (${networkProblem(error)})`);
      }
      const text = await response.text();
      const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      if (!response.ok) {
        throw new Error(`${response.status} ${String(parsed?.detail ?? parsed?.title ?? '')}`.trim());
      }
      return parsed;
    };

    try {
      const [target] = positionals as [string];
      if (action === 'add') {
        const events = values.events
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean);
        const created = (await call('POST', '/webhooks', {
          url: target,
          events,
          ...(values.description === undefined ? {} : { description: values.description }),
        })) as unknown as Endpoint;
        if (values.json) print(out, JSON.stringify(created));
        else {
          print(out, `Added webhook ${created.id} → ${created.url} (events: ${created.events.join(', ')}).`);
          print(out, `Signing secret (shown only this once; verify deliveries with it):\n\n  ${created.secret}\n`);
        }
        return 0;
      }
      if (action === 'list') {
        const { webhooks } = (await call('GET', '/webhooks')) as unknown as { webhooks: Endpoint[] };
        if (values.json) print(out, JSON.stringify(webhooks));
        else if (webhooks.length === 0) print(out, 'No webhooks.');
        else {
          print(
            out,
            table([
              ['ID', 'URL', 'EVENTS', 'ENABLED', 'CREATED'],
              ...webhooks.map((w) => [
                w.id,
                w.url,
                w.events.join(','),
                w.enabled ? 'yes' : `no: ${w.disabled_reason ?? ''}`,
                w.created_at,
              ]),
            ]),
          );
        }
        return 0;
      }
      if (action === 'remove') {
        await call('DELETE', `/webhooks/${encodeURIComponent(target)}`);
        print(out, values.json ? JSON.stringify({ id: target, removed: true }) : `Removed webhook ${target}.`);
        return 0;
      }
      const { deliveries } = (await call(
        'GET',
        `/webhooks/${encodeURIComponent(target)}/deliveries?limit=${limit}`,
      )) as unknown as { deliveries: Delivery[] };
      if (values.json) print(out, JSON.stringify(deliveries));
      else if (deliveries.length === 0) print(out, 'No deliveries.');
      else {
        print(
          out,
          table([
            ['DELIVERY', 'EVENT', 'DOCUMENT', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED'],
            ...deliveries.map((d) => {
              const last = d.attempt_log.at(-1);
              return [
                d.id,
                d.event_type,
                d.document_id ?? (d.source_id ? `source ${d.source_id}` : '-'),
                d.status,
                String(d.attempts),
                last ? (last.status_code === null ? (last.error ?? 'no answer') : String(last.status_code)) : '-',
                d.next_attempt_at ?? '-',
                d.created_at,
              ];
            }),
          ]),
        );
      }
      return 0;
    } catch (error) {
      print(err, `kb webhooks ${action}: ${(error as Error).message}`);
      return 1;
    }
  },
};
