import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestContext } from '../plugins/auth.plugin.ts';
import { ChunkParams, ChunksQuery, ChunksResponse, ContextQuery, ContextResponse } from '../schemas/chunks.schema.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import { documentIdOf, type RoutesOptions } from './documents.routes.ts';

const chunksRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  const { chunks } = services;

  app.get(
    '/chunks/:document_id',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['chunks'],
        operationId: 'listChunks',
        summary: 'Chunks of a document',
        description: 'The current version by default, or `version`. Up to 1000 chunks a page; cursor paging beyond.',
        params: ChunkParams,
        querystring: ChunksQuery,
        response: { 200: ChunksResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      return chunks.chunks(requestContext(request), documentIdOf(request.params.document_id), {
        limit: q.limit ?? 1000,
        ...(q.version !== undefined ? { version: q.version } : {}),
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.get(
    '/chunks/:document_id/context',
    {
      config: { permission: 'read', scopedTokens: true },
      schema: {
        tags: ['chunks'],
        operationId: 'getDocumentContext',
        summary: 'Extracted text of a document, or one chunk with its neighbours',
        description:
          'Without `chunk_id`: the full extracted text. With `chunk_id`: that chunk and `window` chunks on each side (default 2, at most 20).',
        params: ChunkParams,
        querystring: ContextQuery,
        response: { 200: ContextResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      return chunks.context(requestContext(request), documentIdOf(request.params.document_id), {
        window: q.window ?? 2,
        ...(q.version !== undefined ? { version: q.version } : {}),
        ...(q.chunk_id !== undefined ? { chunkId: q.chunk_id } : {}),
      });
    },
  );
};

export default chunksRoutes;
