/**
 * Settings > API Keys: list the workspace's keys, create one (shown once), revoke one. Creating
 * and revoking take an owner account and are written to the audit log.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import { PERMISSIONS, PLANS } from '../../../core/model/account-records.model.ts';
import type { DashboardSession } from '../lib/dashboard-session.ts';
import { Label, StringEnum } from '../schemas/common.schema.ts';
import { type DashboardRoutesOptions, requireSession } from './dashboard-session.routes.ts';

const CreateKeyBody = Type.Object(
  {
    name: Label({ minLength: 1, maxLength: 200 }),
    permissions: Type.Array(StringEnum(PERMISSIONS), { minItems: 1, maxItems: 3, uniqueItems: true }),
    plan: StringEnum(PLANS),
  },
  { additionalProperties: false },
);

function requireOwner(found: DashboardSession): void {
  if (found.user.role !== 'owner') {
    throw new KbError('forbidden', 'Only an owner of the workspace can create or revoke API keys.');
  }
}

const dashboardKeysRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (app, { services }) => {
  app.get('/dashboard/api/keys', async (request) => {
    const found = await requireSession(request, services);
    const keys = await services.keys.list(found.workspaceId);
    return { keys: keys.reverse() };
  });

  app.post('/dashboard/api/keys', { schema: { body: CreateKeyBody } }, async (request, reply) => {
    const found = await requireSession(request, services);
    requireOwner(found);
    const created = await services.keys.create(
      {
        workspaceId: found.workspaceId,
        name: request.body.name,
        permissions: request.body.permissions,
        plan: request.body.plan,
      },
      { accountId: found.user.id, workspaceId: found.workspaceId, traceId: request.id },
    );
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ key: created.key, record: created.record });
  });

  app.post(
    '/dashboard/api/keys/:id/revoke',
    { schema: { params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } },
    async (request) => {
      const found = await requireSession(request, services);
      requireOwner(found);
      const key = (await services.keys.list(found.workspaceId)).find((k) => k.id === request.params.id);
      if (!key) throw new KbError('not-found', `No API key ${request.params.id} in this workspace.`);
      if (key.revoked_at === null) {
        await services.keys.revoke(key.id, {
          accountId: found.user.id,
          workspaceId: found.workspaceId,
          traceId: request.id,
        });
      }
      const after = (await services.keys.list(found.workspaceId)).find((k) => k.id === key.id);
      return { key: after ?? key, already_revoked: key.revoked_at !== null };
    },
  );
};

export default dashboardKeysRoutes;
