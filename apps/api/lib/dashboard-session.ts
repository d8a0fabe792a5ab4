/**
 * A person's dashboard session on a request: the session cookie, the workspace the request is
 * for (`X-KB-Workspace`, else the account's first), and the CSRF check of state changes. A route
 * a browser opens without headers of its own (the event stream, read by `EventSource`) may let the
 * session name its workspace in the `workspace` query parameter instead; it is checked against the
 * account's workspaces exactly as the header is.
 */
import type { FastifyRequest } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { SessionRecord, UserRecord } from '../../../core/model/account-records.model.ts';
import type { AccountsService } from '../../../core/services/services.ts';
import { readCookie, SESSION_COOKIE } from './session-cookie.ts';

export interface DashboardSession {
  readonly user: UserRecord;
  readonly session: SessionRecord;
  /** The workspace this request acts on; always one of the account's. */
  readonly workspaceId: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The first value of a header or query parameter, trimmed; undefined when absent or empty. */
function firstValue(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() !== '' ? first.trim() : undefined;
}

/**
 * The workspace a session request names: `X-KB-Workspace`, or the `workspace` query parameter on
 * a route that accepts it (`sessionWorkspaceQuery`). Both at once must agree (`bad-request`).
 */
function askedWorkspace(request: FastifyRequest): string | undefined {
  const header = firstValue(request.headers['x-kb-workspace']);
  if (!request.routeOptions.config?.sessionWorkspaceQuery) return header;
  const query = firstValue((request.query as Record<string, unknown> | undefined)?.workspace);
  if (header !== undefined && query !== undefined && header !== query) {
    throw new KbError('bad-request', 'X-KB-Workspace and the workspace parameter name different workspaces.');
  }
  return header ?? query;
}

/** The session cookie's token, or null. */
export function sessionToken(request: FastifyRequest): string | null {
  return readCookie(request.headers.cookie, SESSION_COOKIE) || null;
}

export interface DashboardSessionOptions {
  /**
   * Whether the request is one an account with a generated password may make before choosing its
   * own (reading the session, changing the password, signing out). Default false.
   */
  readonly beforePasswordChange?: boolean;
}

/**
 * The signed-in account of a request, or null when no session cookie is sent. A cookie of an
 * unknown, expired or signed-out session is `unauthorized`; a workspace the account does not
 * have is `not-found` (like any other workspace's data); a state change without the session's
 * `X-CSRF-Token` is `forbidden`; an account whose password the service generated is
 * `password-change-required` (403) until it chooses one, except for the requests of
 * `beforePasswordChange`. API keys never meet this check.
 */
export async function dashboardSession(
  request: FastifyRequest,
  accounts: AccountsService,
  options: DashboardSessionOptions = {},
): Promise<DashboardSession | null> {
  const token = sessionToken(request);
  if (token === null) return null;
  const found = await accounts.authenticate(token);
  if (!found) throw new KbError('unauthorized', 'Your session has expired or was signed out; sign in again.');
  const asked = askedWorkspace(request);
  const workspaceId = asked || found.user.workspaceIds[0];
  if (!workspaceId || !found.user.workspaceIds.includes(workspaceId)) {
    throw new KbError('not-found', `No workspace "${asked}" for this account.`);
  }
  if (!SAFE_METHODS.has(request.method)) {
    const csrf = request.headers['x-csrf-token'];
    if ((Array.isArray(csrf) ? csrf[0] : csrf) !== found.session.csrfToken) {
      throw new KbError('forbidden', 'Missing or wrong X-CSRF-Token: reload the dashboard and try again.');
    }
  }
  if (found.user.passwordGenerated && !options.beforePasswordChange) {
    throw new KbError(
      'password-change-required',
      'This account still has the password the service generated: choose your own (the dashboard asks for it; POST /dashboard/api/session/password) before anything else.',
    );
  }
  return { user: found.user, session: found.session, workspaceId };
}
