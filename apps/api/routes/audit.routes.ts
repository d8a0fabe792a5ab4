import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AuditQuery, AuditResponse } from '../schemas/audit.schema.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

const auditRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  app.get(
    '/audit-logs',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['audit'],
        operationId: 'listAuditLogs',
        summary: 'Audit log of the workspace',
        description:
          'Every create, update, rollback, delete and purge, oldest first (`order=desc`: newest first), with cursor paging.',
        querystring: AuditQuery,
        response: { 200: AuditResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS) },
      },
    },
    async (request) => {
      const q = request.query;
      return services.audit.list(requestContext(request), {
        limit: q.limit ?? 20,
        ...(q.document_id !== undefined ? { documentId: q.document_id.toLowerCase() } : {}),
        ...(q.action !== undefined ? { action: q.action } : {}),
        ...(q.since !== undefined ? { since: q.since } : {}),
        ...(q.until !== undefined ? { until: q.until } : {}),
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
        ...(q.order !== undefined ? { order: q.order } : {}),
      });
    },
  );
};

export default auditRoutes;
