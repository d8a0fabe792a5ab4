/**
 * The separate metrics listener: `GET /metrics`, `/health/live` and `/health/ready` on their own
 * port (`KB_METRICS_HOST:KB_METRICS_PORT`). `kb worker` always runs one; `kb serve` when the port
 * is configured.
 */
import Fastify from 'fastify';
import type { Config } from '../../core/config/config.ts';
import type { Metrics } from '../../core/metrics/metrics.port.ts';
import type { Services } from '../../core/services/services.ts';
import metricsPlugin from './plugins/metrics.plugin.ts';
import problemPlugin from './plugins/problem.plugin.ts';
import requestIdPlugin, { generateRequestId } from './plugins/request-id.plugin.ts';
import healthRoutes from './routes/health.routes.ts';
import type { RunningServer } from './server.ts';

export interface MetricsServerDeps {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly services: Pick<Services, 'health'>;
  readonly port: number;
}

export async function startMetricsServer(deps: MetricsServerDeps): Promise<RunningServer> {
  const app = Fastify({ logger: false, genReqId: generateRequestId, requestIdHeader: false });
  await app.register(requestIdPlugin);
  await app.register(problemPlugin, { problemBaseUrl: deps.config.problemBaseUrl });
  await app.register(metricsPlugin, {
    metrics: deps.metrics,
    serve: true,
    token: deps.config.metrics.token,
    openWithoutToken: true,
  });
  await app.register(healthRoutes, { services: deps.services });
  await app.listen({ host: deps.config.metrics.host, port: deps.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : deps.port;
  const host = deps.config.metrics.host.includes(':') ? `[${deps.config.metrics.host}]` : deps.config.metrics.host;
  return { app, url: `http://${host}:${port}`, close: () => app.close() };
}
