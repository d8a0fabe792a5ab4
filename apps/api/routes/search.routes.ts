import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import { KbError } from '../../../core/errors/kb-error.ts';
import type { SearchFilters } from '../../../core/model/search-filters.model.ts';
import type { SearchRequest } from '../../../core/services/services.ts';
import { requestContext } from '../plugins/auth.plugin.ts';
import { AUTHENTICATED_ERRORS, problemResponses } from '../schemas/common.schema.ts';
import { SearchBody, type SearchFiltersSchema, SearchResponse } from '../schemas/search.schema.ts';
import type { RoutesOptions } from './documents.routes.ts';

/** Filters as a request sends them (validated) in the services' form; a scalar metadata value becomes a one-element list. */
export function toSearchFilters(f: Static<typeof SearchFiltersSchema>): SearchFilters {
  const metadata = f.metadata
    ? Object.fromEntries(Object.entries(f.metadata).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]))
    : undefined;
  const filters: SearchFilters = {
    ...(f.document_ids !== undefined ? { documentIds: f.document_ids } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(f.mime_types !== undefined ? { mimeTypes: f.mime_types } : {}),
    ...(f.created_after !== undefined ? { createdAfter: f.created_after } : {}),
    ...(f.created_before !== undefined ? { createdBefore: f.created_before } : {}),
  };
  return filters;
}

/** Filters in the services' form as the API shows them (the inverse of {@link toSearchFilters}). */
export function fromSearchFilters(f: SearchFilters): Static<typeof SearchFiltersSchema> {
  return {
    ...(f.documentIds !== undefined ? { document_ids: [...f.documentIds] } : {}),
    ...(f.metadata !== undefined
      ? { metadata: Object.fromEntries(Object.entries(f.metadata).map(([k, v]) => [k, [...v]])) }
      : {}),
    ...(f.mimeTypes !== undefined ? { mime_types: [...f.mimeTypes] } : {}),
    ...(f.createdAfter !== undefined ? { created_after: f.createdAfter } : {}),
    ...(f.createdBefore !== undefined ? { created_before: f.createdBefore } : {}),
  };
}

/** The request body (validated) as the search service's request. */
export function toSearchRequest(body: Static<typeof SearchBody>): SearchRequest {
  const filters = toSearchFilters(body.filters ?? {});
  return {
    query: body.query,
    asOf: body.as_of ?? null,
    limit: body.limit ?? 10,
    mode: body.mode ?? 'hybrid',
    filters,
    ...(body.min_score !== undefined ? { minScore: body.min_score } : {}),
    ...(body.weights !== undefined ? { weights: body.weights } : {}),
    ...(body.group_by !== undefined ? { groupBy: body.group_by } : {}),
  };
}

const searchRoutes: FastifyPluginAsyncTypebox<RoutesOptions> = async (app, { services }) => {
  app.post(
    '/search',
    {
      config: { permission: 'search', scopedTokens: true },
      schema: {
        tags: ['search'],
        operationId: 'search',
        summary: 'Search the workspace',
        description:
          'Only `completed` versions are served. With `as_of`, the versions that were served at that instant (a future instant means now). ' +
          'When the index holds vectors of another embedding model than the service uses (until `kb reindex`), `semantic` answers 409 and `hybrid` falls back to keyword search with a warning.',
        body: SearchBody,
        response: { 200: SearchResponse, ...problemResponses(400, ...AUTHENTICATED_ERRORS, 409, 422) },
      },
    },
    async (request) => {
      const { weights } = request.body;
      if (weights && weights.keyword + weights.semantic === 0) {
        throw new KbError('validation-error', '`weights` must not be 0 for both rankings.', {
          errors: [{ field: '/weights', message: 'keyword and semantic are both 0' }],
        });
      }
      return services.search.search(requestContext(request), toSearchRequest(request.body));
    },
  );
};

export default searchRoutes;
