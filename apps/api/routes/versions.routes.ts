import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestContext } from '../plugins/auth.plugin.ts';
import { writeKeyOf } from '../plugins/idempotency.plugin.ts';
import { AUTHENTICATED_ERRORS, DocumentIdParams, problemResponses } from '../schemas/common.schema.ts';
import {
  CompareQuery,
  CompareResponse,
  RollbackBody,
  RollbackResponse,
  VersionDetail,
  VersionList,
  VersionParams,
} from '../schemas/versions.schema.ts';
import { documentIdOf, type RoutesOptions } from './documents.routes.ts';

const versionsRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const { versions } = services;

  app.get(
    '/documents/:id/versions',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['versions'],
        operationId: 'listVersions',
        summary: 'Versions of a document, newest first',
        params: DocumentIdParams,
        response: { 200: VersionList, ...problemResponses(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => versions.history(requestContext(request), documentIdOf(request.params.id)),
  );

  // Registered before `/versions/:version` so `compare` is never read as a version number.
  app.get(
    '/documents/:id/versions/compare',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['versions'],
        operationId: 'compareVersions',
        summary: 'Compare two versions chunk by chunk',
        description:
          'Chunks are aligned by content (longest common subsequence of content hashes); an unmatched pair at the same aligned position is `modified`, other leftovers `added` or `removed`.',
        params: DocumentIdParams,
        querystring: CompareQuery,
        response: { 200: CompareResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) =>
      versions.compare(requestContext(request), documentIdOf(request.params.id), request.query.from, request.query.to),
  );

  app.get(
    '/documents/:id/versions/:version',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['versions'],
        operationId: 'getVersion',
        summary: 'One version with its metadata',
        params: VersionParams,
        response: { 200: VersionDetail, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) =>
      versions.version(requestContext(request), documentIdOf(request.params.id), request.params.version),
  );

  app.post(
    '/documents/:id/rollback',
    {
      config: { permission: 'write', idempotent: 'body' },
      schema: {
        tags: ['versions'],
        operationId: 'rollbackDocument',
        summary: 'Restore an earlier version as a new version',
        description:
          'Creates version M+1 with the content and metadata of `target_version`. Reuses its chunks and vectors when the embedding model is unchanged. 409 when the target is the current version. A rollback that must be ingested again (the target is not a completed version with its chunks) is refused with 429 or 503 and `Retry-After` while the ingestion backlog is full, as an upload is.',
        params: DocumentIdParams,
        body: RollbackBody,
        response: { 201: RollbackResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const view = await versions.rollback(
        requestContext(request),
        documentIdOf(request.params.id),
        request.body.target_version,
        writeKeyOf(request),
      );
      return reply.code(201).send(view);
    },
  );
};

export default versionsRoutes;
