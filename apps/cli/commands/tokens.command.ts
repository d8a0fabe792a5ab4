import { parseArgs } from 'node:util';
import { type Command, print } from './command.ts';
import { CommandLineError } from './help.ts';
import { checkService, networkProblem } from './service-client.ts';

/** The request body of `POST /api/v1/tokens` the command line asks for; a wrong value is a {@link CommandLineError}. */
function tokenBody(values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const ttlText = values['expires-in'];
  if (typeof ttlText !== 'string') throw new CommandLineError('give the lifetime: --expires-in <seconds>.');
  const ttl = Number(ttlText);
  if (!/^\d+$/.test(ttlText) || ttl < 1) {
    throw new CommandLineError(`--expires-in must be a whole number of seconds, not "${ttlText}".`);
  }
  const body: Record<string, unknown> = { expires_in: ttl };
  const list = (name: string) =>
    String(values[name])
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  if (values.permissions !== undefined) body.permissions = list('permissions');
  if (values.sources !== undefined) body.sources = list('sources');
  const filter = values.filter as string | undefined;
  if (filter !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(filter);
    } catch {
      throw new CommandLineError(
        `--filter must be a JSON object, e.g. '{"metadata":{"customer":"acme"}}'; "${filter}" is not valid JSON.`,
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new CommandLineError(`--filter must be a JSON object, not ${JSON.stringify(parsed)}.`);
    }
    body.filters = parsed;
  }
  return body;
}

/**
 * `kb tokens create`: one `POST /api/v1/tokens` through the HTTP API. Prints the token alone on
 * stdout (for a script to hand on) and what it carries on stderr, or with `--json` the service's
 * answer as it came. The service refusing a value (400, 403, 422) is a wrong command line (exit 2);
 * any other failure exits 1.
 */
export const tokensCommand: Command = {
  async run(args, { client, out, err }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        url: { type: 'string', default: client.url },
        key: { type: 'string' },
        'expires-in': { type: 'string' },
        permissions: { type: 'string' },
        filter: { type: 'string' },
        sources: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const [action, ...rest] = positionals;
    if (action !== 'create') {
      throw new CommandLineError(
        action ? `unknown action "${action}"; the action is create.` : 'name an action: create.',
      );
    }
    if (rest.length > 0) throw new CommandLineError(`unexpected argument "${rest[0]}".`);
    const body = tokenBody(values);
    const key = values.key ?? client.apiKey;
    if (!key) {
      throw new CommandLineError(
        'kb tokens create needs an API key with read or search permission: --key ink_…, KB_API_KEY or KB_KEY.',
      );
    }
    const base = String(values.url).replace(/\/+$/, '');
    const unreachable = await checkService(base);
    if (unreachable) {
      print(err, `kb tokens: ${unreachable}`);
      return 1;
    }
    let response: Response;
    try {
      response = await fetch(`${base}/api/v1/tokens`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (error) {
      print(err, `kb tokens: the service did not answer (${networkProblem(error)}).`);
      return 1;
    }
    const text = await response.text();
    const answer = parseJson(text) as Record<string, unknown> | null;
    if (!response.ok) {
      const problem = answer as { detail?: string; errors?: Array<{ field: string; message: string }> } | null;
      const detail = problem?.detail ?? text.slice(0, 200);
      const fields = (problem?.errors ?? []).map((e) => `${e.field} ${e.message}`).filter((f) => !detail.includes(f));
      const reason = `${response.status}: ${detail}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
      if ([400, 403, 422].includes(response.status)) {
        throw new CommandLineError(`the service refused the token: ${reason}`);
      }
      print(err, `kb tokens: ${reason}`);
      return 1;
    }
    if (values.json) {
      print(out, text);
      return 0;
    }
    print(out, String(answer?.token));
    const permissions = Array.isArray(answer?.permissions) ? answer.permissions.join(', ') : '';
    print(
      err,
      `Scoped token (${permissions}) of key ${String(answer?.parent_key_id)}, valid until ${String(answer?.expires_at)}.`,
    );
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
