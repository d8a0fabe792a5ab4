/**
 * Names of documents for the dashboard's pages that list document ids (the audit log): one request
 * for a page's ids, deleted documents included, so that a deleted one is named without a 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { RequestContext } from '../../../core/services/services.ts';
import { type DashboardRoutesOptions, requireSession } from './dashboard-session.routes.ts';

/** At most this many ids per request (a page of the audit log names at most 100 entries). */
const MAX_IDS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const NamesQuery = Type.Object({
  ids: Type.String({
    minLength: 1,
    maxLength: MAX_IDS * 37,
    description: `Comma-separated document ids (UUIDs), at most ${MAX_IDS}.`,
  }),
});

const dashboardDocumentsRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (app, { services }) => {
  app.get('/dashboard/api/document-names', { schema: { querystring: NamesQuery } }, async (request) => {
    const found = await requireSession(request, services);
    const ids = request.query.ids.split(',').map((id) => id.trim());
    const bad = ids.find((id) => !UUID.test(id));
    if (bad !== undefined) {
      throw new KbError('bad-request', `\`ids\` holds ${JSON.stringify(bad.slice(0, 40))}, which is no document id.`);
    }
    if (ids.length > MAX_IDS)
      throw new KbError('bad-request', `\`ids\` names ${ids.length} documents; at most ${MAX_IDS}.`);
    const ctx: RequestContext = {
      workspaceId: found.workspaceId,
      keyId: found.user.id,
      actorType: 'user',
      traceId: request.id,
    };
    return { documents: await services.documents.names(ctx, ids) };
  });
};

export default dashboardDocumentsRoutes;
