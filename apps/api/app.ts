/**
 * The HTTP API as a Fastify application: everything registered, nothing listening (see
 * `server.ts`). Tests build it with their own services; `kb serve` builds it with the runtime's.
 */
import http from 'node:http';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../../core/config/config.ts';
import type { Metrics } from '../../core/metrics/metrics.port.ts';
import type { Services } from '../../core/services/services.ts';
import { AccessLogController } from './lib/access-log.ts';
import { createClientErrorHandler } from './lib/client-error.ts';
import { parseJsonBody } from './lib/json-body.ts';
import { problemOf } from './lib/problem-status.ts';
import { MULTIPART_LIMITS } from './lib/upload-form.ts';
import { createUploadSlots } from './lib/upload-slots.ts';
import { installValidators } from './lib/validation.ts';
import metricsPlugin from './plugins/metrics.plugin.ts';
import openApiPlugin from './plugins/openapi.plugin.ts';
import problemPlugin, { describeError, sendProblem } from './plugins/problem.plugin.ts';
import requestIdPlugin, { generateRequestId } from './plugins/request-id.plugin.ts';
import dashboardDocumentsRoutes from './routes/dashboard-documents.routes.ts';
import dashboardInsightsRoutes from './routes/dashboard-insights.routes.ts';
import dashboardKeysRoutes from './routes/dashboard-keys.routes.ts';
import dashboardPagesRoutes, { redirectBrowsersToDashboard } from './routes/dashboard-pages.routes.ts';
import dashboardSessionRoutes from './routes/dashboard-session.routes.ts';
import errorPagesRoutes from './routes/error-pages.routes.ts';
import healthRoutes from './routes/health.routes.ts';
import mcpRoutes from './routes/mcp.routes.ts';
import v1Routes from './routes/v1.routes.ts';

export interface AppDeps {
  readonly config: Config;
  readonly services: Services;
  /** Service version, shown in the OpenAPI document. */
  readonly version: string;
  /** Reported to for every request; with it, `/metrics` is served on the API port unless a metrics port is set. */
  readonly metrics?: Metrics;
  /** Fastify/pino logger options; `false` (the default) logs nothing. */
  readonly logger?: boolean | object;
  /** Folder of the built dashboard (default `apps/dashboard/dist`). */
  readonly dashboardDir?: string;
}

/** Path prefixes of the resource API; the first is the documented one. */
export const API_PREFIXES = ['/api/v1', '/v1'] as const;

/**
 * Request line and headers: room for the longest query string the routes accept (e.g. a 2048-character
 * cursor of 4-byte characters, percent-encoded), so such a request is validated, not refused with 431.
 */
const MAX_HEADER_BYTES = 64 * 1024;

/** JSON request bodies (search, patch, rollback) are small; uploads are multipart and not bound by this. */
const JSON_BODY_LIMIT = 1024 * 1024;

/** How long an idle keep-alive connection stays open (Fastify's default). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * Builds the application: request ids, problem details, multipart, validation, OpenAPI, health,
 * error pages, the dashboard (pages and its session, keys, usage and pipeline endpoints under
 * `/dashboard`), the MCP endpoint (`/mcp`), and the resource routes under both `/api/v1` and `/v1`. Does not listen.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, services } = deps;
  const accessLog = new AccessLogController({ requestIdLogLabel: 'trace_id' });
  const app = Fastify({
    logger: deps.logger ?? false,
    genReqId: generateRequestId,
    requestIdHeader: false,
    logController: accessLog,
    bodyLimit: JSON_BODY_LIMIT,
    requestTimeout: config.requestTimeoutMs,
    // Node checks request timeouts every `connectionsCheckingInterval` (30 s by default, which would
    // let a slow body run well past a short timeout).
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          maxHeaderSize: MAX_HEADER_BYTES,
          requestTimeout: config.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(config.requestTimeoutMs / 4))),
        },
        handler,
      );
      // Fastify's own default, which a server factory does not get: Node's 5 s would close idle
      // keep-alive connections that clients (which keep them longer) are about to reuse.
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
    clientErrorHandler: createClientErrorHandler(config.problemBaseUrl, config.requestTimeoutMs, MAX_HEADER_BYTES),
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      if ((error as { code?: string }).code === 'FST_ERR_MAX_PARAM_LENGTH') {
        // Ids are at most 100 characters: a longer one names nothing, like any unknown id.
        sendProblem(request, reply, config.problemBaseUrl, {
          ...problemOf('not-found'),
          detail: 'No such resource: a path id is at most 100 characters.',
        });
        return;
      }
      sendProblem(request, reply, config.problemBaseUrl, describeError(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  accessLog.start(app.log);
  app.addHook('onClose', async () => accessLog.stop());

  // Responses are the services' views, printed as they are; response schemas only document them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installValidators(app);
  // JSON is the only non-multipart body the API takes; anything else is a 400 (see problem plugin).
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);

  await app.register(requestIdPlugin);
  app.addHook('onRequest', redirectBrowsersToDashboard);
  await app.register(problemPlugin, { problemBaseUrl: config.problemBaseUrl });
  if (deps.metrics) {
    await app.register(metricsPlugin, {
      metrics: deps.metrics,
      serve: config.metrics.port === null,
      token: config.metrics.token,
      openWithoutToken: false,
    });
  }
  // `preservePath`: a file name sent as a relative path (`guide/index.md`, as `kb ingest` names
  // files) stays the document's name instead of being cut to its last segment.
  await app.register(multipart, { limits: MULTIPART_LIMITS, throwFileSizeLimit: false, preservePath: true });
  await app.register(openApiPlugin, { version: deps.version, aliasPrefixes: API_PREFIXES.slice(1) });

  await app.register(healthRoutes, { services });
  await app.register(errorPagesRoutes);
  await app.register(dashboardSessionRoutes, { services, config });
  await app.register(dashboardKeysRoutes, { services, config });
  await app.register(dashboardInsightsRoutes, { services, config });
  await app.register(dashboardDocumentsRoutes, { services, config });
  await app.register(dashboardPagesRoutes, deps.dashboardDir === undefined ? {} : { dir: deps.dashboardDir });
  await app.register(mcpRoutes, { services, version: deps.version });
  const uploadSlots = createUploadSlots(config.maxConcurrentUploads);
  for (const prefix of API_PREFIXES) {
    await app.register(v1Routes, { prefix, services, uploadSlots });
  }
  return app;
}
