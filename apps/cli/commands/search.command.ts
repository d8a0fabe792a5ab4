import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { SearchView } from '../../../core/model/response-views.model.ts';
import { type Command, print } from './command.ts';
import { CommandLineError } from './help.ts';
import { DEFAULT_WIDTH, printable, renderSearch } from './search-output.ts';
import { checkService, networkProblem } from './service-client.ts';

const MODES = ['hybrid', 'semantic', 'keyword'] as const;

/** The request body the command line asks for; throws a {@link CommandLineError} for a wrong value. */
function searchBody(query: string, values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const mode = String(values.mode);
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new CommandLineError(`--mode must be one of ${MODES.join(', ')}, not "${mode}".`);
  }
  const limitText = String(values.limit);
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > 100) {
    throw new CommandLineError(`--limit must be a whole number from 1 to 100, not "${limitText}".`);
  }
  const body: Record<string, unknown> = { query, mode, limit };
  const filter = values.filter as string | undefined;
  if (filter !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(filter);
    } catch {
      throw new CommandLineError(
        `--filter must be a JSON object, e.g. '{"metadata":{"team":"docs"}}'; "${filter}" is not valid JSON.`,
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new CommandLineError(
        `--filter must be a JSON object, e.g. '{"mime_types":["application/pdf"]}', not ${JSON.stringify(parsed)}.`,
      );
    }
    body.filters = parsed;
  }
  const asOf = values['as-of'] as string | undefined;
  if (asOf !== undefined) {
    if (Number.isNaN(Date.parse(asOf))) {
      throw new CommandLineError(`--as-of must be an ISO 8601 instant, e.g. 2026-01-31T12:00:00Z, not "${asOf}".`);
    }
    body.as_of = asOf;
  }
  return body;
}

/** The columns of `out` when it is a terminal, else {@link DEFAULT_WIDTH}. */
function widthOf(out: Writable): number {
  const tty = out as Writable & { isTTY?: boolean; columns?: number };
  return tty.isTTY && tty.columns ? tty.columns : DEFAULT_WIDTH;
}

/**
 * `kb search`: one `POST /api/v1/search` through the HTTP API. Prints the ranked passages as
 * text wrapped to the terminal, or with `--json` the service's answer exactly as it came. The
 * service refusing a value (400, 422) is a wrong command line (exit 2); any other failure exits 1.
 */
export const searchCommand: Command = {
  async run(args, { client, out, err }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: client.url },
        key: { type: 'string' },
        mode: { type: 'string', default: 'hybrid' },
        limit: { type: 'string', default: '10' },
        filter: { type: 'string' },
        'as-of': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const query = positionals.join(' ').trim();
    if (query === '') throw new CommandLineError('give the text to search for.');
    const body = searchBody(query, values);
    const key = values.key ?? client.apiKey;
    if (!key)
      throw new CommandLineError(
        'kb search needs an API key with search permission: --key ink_…, KB_API_KEY or KB_KEY.',
      );
    const base = String(values.url).replace(/\/+$/, '');
    const unreachable = await checkService(base);
    if (unreachable) {
      print(err, `kb search: ${unreachable}`);
      return 1;
    }
    let response: Response;
    try {
      response = await fetch(`${base}/api/v1/search`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (error) {
      print(err, `kb search: the service did not answer (${networkProblem(error)}).`);
      return 1;
    }
    const text = await response.text();
    if (!response.ok) {
      const problem = parseJson(text) as { detail?: string; errors?: Array<{ field: string; message: string }> } | null;
      const detail = problem?.detail ?? text.slice(0, 200);
      const fields = (problem?.errors ?? []).map((e) => `${e.field} ${e.message}`).filter((f) => !detail.includes(f));
      const reason = `${response.status}: ${detail}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
      // A value from the command line the service cannot use.
      if (response.status === 400 || response.status === 422) {
        throw new CommandLineError(`the service refused the search: ${reason}`);
      }
      print(err, `kb search: ${reason}`);
      return 1;
    }
    if (values.json) {
      print(out, text);
      return 0;
    }
    const answer = parseJson(text) as SearchView;
    for (const warning of answer.warnings ?? []) print(err, `kb search: warning: ${printable(warning)}`);
    out.write(renderSearch(answer, widthOf(out)));
    return 0;
  },
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
