/**
 * The dashboard's sign-in: `POST /dashboard/api/session` (email and password → session cookie),
 * `GET` (who is signed in, and the CSRF token), `DELETE` (sign out), and
 * `POST /dashboard/api/session/password` (change the password; other sessions are signed out). Persons only: an API key
 * opens no session.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Config } from '../../../core/config/config.ts';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { SessionRecord, UserRecord } from '../../../core/model/account-records.model.ts';
import { accountView } from '../../../core/services/accounts.service.ts';
import type { Services } from '../../../core/services/services.ts';
import { type DashboardSession, dashboardSession, sessionToken } from '../lib/dashboard-session.ts';
import { clearedSessionCookie, sessionCookie } from '../lib/session-cookie.ts';

export interface DashboardRoutesOptions {
  readonly services: Services;
  readonly config: Config;
}

/** The signed-in account of a dashboard API request; `unauthorized` without a session. */
export async function requireSession(
  request: Parameters<typeof dashboardSession>[0],
  services: Services,
): Promise<DashboardSession> {
  const found = await dashboardSession(request, services.accounts);
  if (!found) throw new KbError('unauthorized', 'Sign in to the dashboard first.');
  return found;
}

function sessionBody(user: UserRecord, session: SessionRecord, workspaceId: string) {
  return {
    account: accountView(user),
    workspace: workspaceId,
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt,
  };
}

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const ChangePasswordBody = Type.Object(
  {
    current_password: Type.String({ minLength: 1, maxLength: 1024 }),
    new_password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const dashboardSessionRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (app, { services, config }) => {
  app.post('/dashboard/api/session', { schema: { body: SignInBody } }, async (request, reply) => {
    const { token, session, user } = await services.accounts.signIn(request.body.email, request.body.password);
    const ttl = (Date.parse(session.expiresAt) - Date.now()) / 1000;
    reply.header('set-cookie', sessionCookie(token, ttl, config.dashboard.secureCookie));
    reply.header('cache-control', 'no-store');
    return sessionBody(user, session, user.workspaceIds[0] ?? '');
  });

  app.get('/dashboard/api/session', async (request, reply) => {
    const { user, session, workspaceId } = await requireSession(request, services);
    reply.header('cache-control', 'no-store');
    return sessionBody(user, session, workspaceId);
  });

  app.post('/dashboard/api/session/password', { schema: { body: ChangePasswordBody } }, async (request, reply) => {
    const { user, session } = await requireSession(request, services);
    await services.accounts.changePassword({
      userId: user.id,
      sessionId: session.id,
      current: request.body.current_password,
      next: request.body.new_password,
    });
    return reply.code(204).send();
  });

  app.delete('/dashboard/api/session', async (request, reply) => {
    await requireSession(request, services);
    const token = sessionToken(request);
    if (token) await services.accounts.signOut(token);
    reply.header('set-cookie', clearedSessionCookie(config.dashboard.secureCookie));
    return reply.code(204).send();
  });
};

export default dashboardSessionRoutes;
