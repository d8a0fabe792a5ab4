import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { RunView, SourceView } from '../../../core/model/source-views.model.ts';
import { sleep } from '../../../core/util/time.ts';
import { type Command, oneLine, print, table } from './command.ts';
import { CommandLineError } from './help.ts';
import { createSourcesClient, type SourcesClient, SourcesRequestError } from './sources-client.ts';

const ACTIONS = ['add', 'list', 'show', 'sync', 'runs', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

const countsLine = (run: RunView) => {
  const c = run.counts;
  return `seen ${c.seen}, created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, deleted ${c.deleted}, failed ${c.failed}, deletions held ${c.deletions_held}`;
};

function describeSource(s: SourceView): string {
  const where = s.path ?? s.sitemap ?? s.urls?.join(' ') ?? '';
  const lines = [
    `${oneLine(s.name)} (${s.kind}, id ${s.id})`,
    `  location:  ${oneLine(where)}`,
    `  include:   ${s.include.length > 0 ? oneLine(s.include.join(' ')) : '(everything)'}`,
    `  exclude:   ${s.exclude.length > 0 ? oneLine(s.exclude.join(' ')) : '(nothing)'}`,
    `  metadata:  ${JSON.stringify(s.metadata)}`,
    `  schedule:  ${s.schedule ?? 'manual'}`,
    `  status:    ${s.status}`,
  ];
  if (s.last_run)
    lines.push(
      `  last run:  ${s.last_run.run_id} ${s.last_run.status} at ${s.last_run.started_at}: ${countsLine(s.last_run)}`,
    );
  return lines.join('\n');
}

function printErrors(err: Writable, run: RunView): void {
  for (const e of run.errors) print(err, `  - ${oneLine(e.item ?? '(run)')}: ${e.code}: ${oneLine(e.detail)}`);
}

/** Follows a run to its end, printing its counts on stderr as they change. */
async function follow(client: SourcesClient, id: string, runId: string, err: Writable): Promise<RunView> {
  const tty = Boolean((err as NodeJS.WriteStream).isTTY);
  let last = '';
  for (;;) {
    const run = await client.run(id, runId);
    const line = `${run.status}: ${countsLine(run)}`;
    if (line !== last) {
      err.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
      last = line;
    }
    if (run.status !== 'running') {
      if (tty) err.write('\n');
      return run;
    }
    await sleep(500);
  }
}

function parseMetadata(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CommandLineError(
      `--metadata must be a JSON object, e.g. '{"team":"docs"}'; "${text}" is not valid JSON.`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CommandLineError(`--metadata must be a JSON object, e.g. '{"team":"docs"}'.`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Sources of synchronisation over the HTTP API: add, list, show, sync (with `--wait`, following
 * the run with its counts), runs and remove. A source is named by its name or id.
 */
export const sourcesCommand: Command = {
  async run(args, { client: service, out, err }) {
    const [action, ...rest] = args;
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: service.url },
        key: { type: 'string' },
        kind: { type: 'string', default: 'folder' },
        path: { type: 'string' },
        include: { type: 'string', multiple: true },
        exclude: { type: 'string', multiple: true },
        metadata: { type: 'string' },
        schedule: { type: 'string' },
        wait: { type: 'boolean', default: false },
        'allow-mass-delete': { type: 'boolean', default: false },
        'delete-documents': { type: 'boolean', default: false },
        limit: { type: 'string', default: '20' },
        json: { type: 'boolean', default: false },
      },
    });
    if (!action) throw new CommandLineError(`name an action: ${ACTIONS.join(', ')}.`);
    if (!ACTIONS.includes(action as Action)) {
      throw new CommandLineError(`unknown action "${action}"; the actions are ${ACTIONS.join(', ')}.`);
    }
    const key = values.key ?? service.apiKey;
    if (!key) throw new CommandLineError('kb sources needs an API key: --key ink_…, KB_API_KEY or KB_KEY.');
    const name = positionals[0];
    if (action !== 'list' && !name) throw new CommandLineError(`${action} needs a source name.`);
    const client = createSourcesClient(String(values.url).replace(/\/+$/, ''), key);
    const json = (value: unknown) => print(out, JSON.stringify(value));

    try {
      switch (action as Action) {
        case 'add': {
          const body = {
            name,
            kind: values.kind,
            ...(values.path !== undefined ? { path: values.path } : {}),
            ...(values.include ? { include: values.include } : {}),
            ...(values.exclude ? { exclude: values.exclude } : {}),
            ...(values.metadata !== undefined ? { metadata: parseMetadata(values.metadata) } : {}),
            ...(values.schedule !== undefined ? { schedule: values.schedule } : {}),
          };
          const source = await client.add(body);
          if (values.json) json(source);
          else
            print(
              out,
              `Added source ${oneLine(source.name)} (id ${source.id}). Sync it with: kb sources sync ${oneLine(source.name)} --wait`,
            );
          return 0;
        }
        case 'list': {
          const sources = await client.list();
          if (values.json) json(sources);
          else if (sources.length === 0) print(out, 'No sources.');
          else {
            const rows = sources.map((s) => [
              s.name,
              s.kind,
              s.path ?? s.sitemap ?? `${s.urls?.length ?? 0} URLs`,
              s.schedule ?? 'manual',
              s.status,
            ]);
            out.write(table([['NAME', 'KIND', 'LOCATION', 'SCHEDULE', 'STATUS'], ...rows]));
          }
          return 0;
        }
        case 'show': {
          const source = await client.find(name as string);
          if (values.json) json(source);
          else {
            print(out, describeSource(source));
            if (source.last_run) printErrors(out, source.last_run);
          }
          return 0;
        }
        case 'sync': {
          const source = await client.find(name as string);
          const started = await client.sync(source.id, values['allow-mass-delete']);
          if (!values.wait) {
            if (values.json) json(started);
            else
              print(
                out,
                `Started run ${started.run_id} of ${oneLine(source.name)}; follow it with: kb sources runs ${oneLine(source.name)}`,
              );
            return 0;
          }
          const run = await follow(client, source.id, started.run_id, err);
          if (values.json) json(run);
          else {
            print(out, `Run ${run.run_id} ${run.status}: ${countsLine(run)}`);
            printErrors(out, run);
          }
          return run.status === 'completed' ? 0 : 1;
        }
        case 'runs': {
          const limit = Number(values.limit);
          if (!/^\d+$/.test(String(values.limit)) || limit < 1 || limit > 100) {
            throw new CommandLineError(`--limit must be a whole number from 1 to 100, not "${values.limit}".`);
          }
          const source = await client.find(name as string);
          const runs = await client.runs(source.id, limit);
          if (values.json) json(runs);
          else if (runs.length === 0) print(out, `No runs of ${oneLine(source.name)} yet.`);
          else {
            const rows = runs.map((r) => [
              r.run_id,
              r.status,
              r.started_at,
              String(r.counts.created),
              String(r.counts.updated),
              String(r.counts.deleted),
              String(r.counts.failed),
              String(r.counts.deletions_held),
            ]);
            out.write(
              table([['RUN', 'STATUS', 'STARTED', 'CREATED', 'UPDATED', 'DELETED', 'FAILED', 'HELD'], ...rows]),
            );
          }
          return 0;
        }
        case 'remove': {
          const source = await client.find(name as string);
          await client.remove(source.id, values['delete-documents']);
          if (values.json) json({ removed: source.id, documents_deleted: values['delete-documents'] });
          else
            print(
              out,
              `Removed source ${oneLine(source.name)}${values['delete-documents'] ? ' and deleted its documents' : ''}.`,
            );
          return 0;
        }
      }
    } catch (error) {
      if (error instanceof SourcesRequestError) {
        print(err, `kb sources ${action}: ${error.message}`);
        return 1;
      }
      throw error;
    }
    return 0;
  },
};
