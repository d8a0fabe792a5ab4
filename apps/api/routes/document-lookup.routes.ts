import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import { LookupBody, LookupResponse } from '../schemas/document-lookup.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** `POST /documents/lookup`: documents by the (source, source_item) they were uploaded with, many at once. */
const documentLookupRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  app.post(
    '/documents/lookup',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['documents'],
        operationId: 'lookupDocuments',
        summary: 'Find documents by source item',
        description:
          'Answers the documents uploaded with any of the given (`source`, `source_item`) pairs, each with its latest version and content hash, so that a bulk loader tells new, changed and unchanged files apart with one request per batch instead of one per file. Reads only (an `Idempotency-Key` is not needed).',
        body: LookupBody,
        response: { 200: LookupResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 422) },
      },
    },
    async (request) => {
      const items = request.body.items.map((item) => ({ source: item.source, sourceItem: item.source_item }));
      return { documents: await services.documents.lookup(requestContext(request), items) };
    },
  );
};

export default documentLookupRoutes;
