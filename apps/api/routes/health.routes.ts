/** Unauthenticated health endpoints at the root path. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { Services } from '../../../core/services/services.ts';
import { Liveness, Readiness } from '../schemas/health.schema.ts';

export const SERVICE_NAME = 'kb-document-service';

export interface HealthRoutesOptions {
  readonly services: Pick<Services, 'health'>;
}

const healthRoutes: FastifyPluginAsyncTypebox<HealthRoutesOptions> = async (app, { services }) => {
  const liveness = (operationId: string) => ({
    schema: {
      tags: ['health'],
      operationId,
      summary: 'Liveness',
      security: [],
      response: { 200: Liveness },
    },
  });
  const live = async () => ({ status: 'healthy' as const, service: SERVICE_NAME });
  app.get('/health', liveness('getHealth'), live);
  app.get('/health/live', liveness('getLiveness'), live);

  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['health'],
        operationId: 'getReadiness',
        summary: 'Readiness',
        description:
          'Checks the database, the vector store, the message log and the object store. 200 when `healthy` or `degraded`, 503 when `unhealthy`.',
        security: [],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      let view: Awaited<ReturnType<typeof services.health.ready>>;
      try {
        view = await services.health.ready();
      } catch (err) {
        request.log.error({ err }, 'readiness check failed');
        throw new KbError('service-unavailable', 'Readiness could not be determined.');
      }
      return reply.code(view.status === 'unhealthy' ? 503 : 200).send(view);
    },
  );
};

export default healthRoutes;
