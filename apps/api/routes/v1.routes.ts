/**
 * The versioned resource API. `app.ts` registers this plugin twice, under `/api/v1` and `/v1`:
 * both prefixes answer identically. Every route here needs an API key (see the auth plugin).
 */
import type { FastifyPluginAsync } from 'fastify';
import { KbError } from '../../../core/errors/kb-error.ts';
import authPlugin from '../plugins/auth.plugin.ts';
import idempotencyPlugin from '../plugins/idempotency.plugin.ts';
import auditRoutes from './audit.routes.ts';
import chunksRoutes from './chunks.routes.ts';
import deadLettersRoutes from './dead-letters.routes.ts';
import documentLookupRoutes from './document-lookup.routes.ts';
import documentsRoutes, { type RoutesOptions } from './documents.routes.ts';
import eventsRoutes from './events.routes.ts';
import searchRoutes from './search.routes.ts';
import sourcesRoutes from './sources.routes.ts';
import tokensRoutes from './tokens.routes.ts';
import versionsRoutes from './versions.routes.ts';
import webhooksRoutes from './webhooks.routes.ts';

const v1Routes: FastifyPluginAsync<RoutesOptions> = async (app, opts) => {
  // Only the services go down: passing `opts` on would repeat this plugin's prefix.
  const deps: RoutesOptions = {
    services: opts.services,
    ...(opts.uploadSlots ? { uploadSlots: opts.uploadSlots } : {}),
  };
  await app.register(authPlugin, deps);
  // After authentication: keys belong to the key (or account) that sent them.
  await app.register(idempotencyPlugin, { services: opts.services, apiPrefix: app.prefix });
  // A JSON route called without any body: the request is malformed (400), not a body that
  // failed validation (422).
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body && request.body === undefined) {
      throw new KbError('bad-request', 'This endpoint takes a JSON body (Content-Type: application/json).');
    }
  });
  await app.register(documentsRoutes, deps);
  await app.register(documentLookupRoutes, deps);
  await app.register(versionsRoutes, deps);
  await app.register(chunksRoutes, deps);
  await app.register(searchRoutes, deps);
  await app.register(auditRoutes, deps);
  await app.register(sourcesRoutes, deps);
  await app.register(webhooksRoutes, deps);
  await app.register(eventsRoutes, deps);
  await app.register(tokensRoutes, deps);
  await app.register(deadLettersRoutes, deps);
};

export default v1Routes;
