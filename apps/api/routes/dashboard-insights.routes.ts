/** The dashboard's Usage and Pipeline pages: requests per minute per key, stage backlogs and readiness. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RequestContext } from '../../../core/services/services.ts';
import type { DashboardSession } from '../lib/dashboard-session.ts';
import { type DashboardRoutesOptions, requireSession } from './dashboard-session.routes.ts';

const contextOf = (found: DashboardSession, traceId: string): RequestContext => ({
  workspaceId: found.workspaceId,
  keyId: found.user.id,
  actorType: 'user',
  traceId,
});

const dashboardInsightsRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (app, { services }) => {
  app.get('/dashboard/api/usage', async (request) => {
    const found = await requireSession(request, services);
    return services.usage.lastHour(contextOf(found, request.id));
  });

  app.get('/dashboard/api/pipeline', async (request) => {
    const found = await requireSession(request, services);
    return services.pipeline.overview(contextOf(found, request.id));
  });
};

export default dashboardInsightsRoutes;
