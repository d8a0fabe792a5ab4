/**
 * Reports every answered request to {@link Metrics} and, when asked, serves `GET /metrics` in the
 * Prometheus text format behind a bearer token (`KB_METRICS_TOKEN`). The route is an operator
 * endpoint, not part of the resource API: it is left out of the OpenAPI document.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { Metrics } from '../../../core/metrics/metrics.port.ts';

export interface MetricsPluginOptions {
  readonly metrics: Metrics;
  /** Serve `GET /metrics` on this app. */
  readonly serve: boolean;
  /** Bearer token `/metrics` requires; null: the port itself is the protection (separate listener). */
  readonly token: string | null;
  /** Whether `/metrics` may answer without a token (true only on a separate metrics listener). */
  readonly openWithoutToken: boolean;
}

function sameToken(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function metricsPlugin(app: FastifyInstance, opts: MetricsPluginOptions) {
  const { metrics } = opts;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === '/metrics') return;
    metrics.httpRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
  if (!opts.serve) return;

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (opts.token === null) {
      if (!opts.openWithoutToken) {
        throw new KbError(
          'not-found',
          'Metrics are served on the API port only when KB_METRICS_TOKEN is set (or on a separate port, KB_METRICS_PORT).',
        );
      }
    } else {
      const header = request.headers.authorization ?? '';
      const presented = header.toLowerCase().startsWith('bearer ') ? header.slice(7).trim() : '';
      if (!sameToken(presented, opts.token)) {
        throw new KbError('unauthorized', 'Scraping /metrics needs Authorization: Bearer <KB_METRICS_TOKEN>.');
      }
    }
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}

export default fp(metricsPlugin, { name: 'kb-metrics', fastify: '5.x' });
